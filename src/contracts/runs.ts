import { z } from "zod";
import { RUN_MODES } from "../domain/statuses";
import { ClientId, EntityId } from "./common";

export const CreateRunRequest = z.strictObject({
  groupIds: z.array(ClientId).min(1).max(100).optional(),
  mode: z.enum(RUN_MODES),
  rowIds: z.array(EntityId).min(1).max(10_000).optional(),
  limit: z.number().int().min(1).max(10_000_000).optional(),
  /** Rows in flight at once; defaults to the plan's window and may not exceed it. */
  window: z.number().int().min(1).max(1_000).optional(),
});
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

export const CancelRunsRequest = z.strictObject({
  dispatchId: EntityId.optional(),
  rowIds: z.array(EntityId).min(1).max(10_000).optional(),
  groupIds: z.array(ClientId).min(1).max(100).optional(),
});
export type CancelRunsRequest = z.infer<typeof CancelRunsRequest>;
