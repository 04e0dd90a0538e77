import { z } from "zod";
import { CELL_OUTCOMES, CELL_STATUSES } from "@/domain/statuses";
import { ClientId, JsonValue } from "./common";

/** Operators of a column condition. Which fit which column type: src/domain/where.ts. */
export const WHERE_OPS = [
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "empty",
  "not_empty",
] as const;
export const WhereOp = z.enum(WHERE_OPS);
export type WhereOp = z.infer<typeof WhereOp>;

/** A condition on one of the row's columns (by column id). */
export const ColumnCondition = z.strictObject({
  column: ClientId,
  op: WhereOp,
  value: JsonValue.optional(),
});
export type ColumnCondition = z.infer<typeof ColumnCondition>;

/** Rows whose cell of `group` has `status`; `status: null` matches rows with no cell there. */
export const CellCondition = z.strictObject({
  group: ClientId,
  status: z.enum(CELL_STATUSES).nullable(),
});
export type CellCondition = z.infer<typeof CellCondition>;

/** Rows whose cell of `group` is `completed` with `outcome` (e.g. `condition_not_met`). */
export const OutcomeCondition = z.strictObject({
  group: ClientId,
  outcome: z.enum(CELL_OUTCOMES),
});
export type OutcomeCondition = z.infer<typeof OutcomeCondition>;

export const WhereCondition = z.union([ColumnCondition, CellCondition, OutcomeCondition]);
export type WhereCondition = z.infer<typeof WhereCondition>;

/** All conditions must hold. */
export const Where = z.array(WhereCondition).min(1).max(20);
export type Where = z.infer<typeof Where>;
