import { z } from "zod";
import type { CellOutcome } from "@/domain/statuses";

/** `not_found` → `notFound`: an outcome's field in a progress body. */
export function outcomeField(outcome: CellOutcome): string {
  return outcome.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

const count = z.number().int().nonnegative();

/**
 * One group's cells by status, `completed` also by outcome (the five outcomes sum to it),
 * and the table's rows with no cell of the group (`neverRun`). One field per status and
 * per outcome of the tuples (a unit test holds the two together).
 */
export const GroupProgress = z.object({
  groupId: z.string(),
  queued: count,
  running: count,
  paused: count,
  completed: count,
  ok: count,
  notFound: count,
  skipped: count,
  conditionNotMet: count,
  overBudget: count,
  error: count,
  cancelled: count,
  neverRun: count,
});
export type GroupProgress = z.infer<typeof GroupProgress>;

/**
 * `GET /api/tables/:id/progress` and the `progress` event: the table's rows and every
 * group of its schema, in schema order, even one with no cell. Exact at rest; during a
 * run, the cells committed so far (the counters' unfolded deltas included).
 */
export const TableProgress = z.object({
  rows: count,
  groups: z.array(GroupProgress),
});
export type TableProgress = z.infer<typeof TableProgress>;
