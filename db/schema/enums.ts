import { pgEnum } from "drizzle-orm/pg-core";
import {
  CELL_OUTCOMES,
  CELL_STATUSES,
  CHILD_RUN_STATUSES,
  CREDIT_STATES,
  DELIVERY_STATUSES,
  DISPATCH_STATUSES,
  EVENT_KINDS,
  HALT_REASONS,
  HOOK_ACTIONS,
  PLANS,
  ROW_INDEX_KINDS,
  ROW_INDEX_STATUSES,
  RUN_MODES,
} from "@/domain/statuses";

export const cellStatus = pgEnum("cell_status", CELL_STATUSES);
export const cellOutcome = pgEnum("cell_outcome", CELL_OUTCOMES);
export const childRunStatus = pgEnum("child_run_status", CHILD_RUN_STATUSES);
export const creditState = pgEnum("credit_state", CREDIT_STATES);
export const dispatchStatus = pgEnum("dispatch_status", DISPATCH_STATUSES);
export const runMode = pgEnum("run_mode", RUN_MODES);
export const haltReason = pgEnum("halt_reason", HALT_REASONS);
export const hookAction = pgEnum("hook_action", HOOK_ACTIONS);
export const eventKind = pgEnum("event_kind", EVENT_KINDS);
export const plan = pgEnum("plan", PLANS);
export const deliveryStatus = pgEnum("delivery_status", DELIVERY_STATUSES);
export const rowIndexStatus = pgEnum("row_index_status", ROW_INDEX_STATUSES);
export const rowIndexKind = pgEnum("row_index_kind", ROW_INDEX_KINDS);
