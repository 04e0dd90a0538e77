import { z } from "zod";
import { CHILD_RUN_STATUSES } from "@/domain/statuses";
import { EntityId, JsonValue } from "./common";
import { CellOutcome, CellStatus } from "./rows";

/** `POST …/cells/:groupId/resume`: the paused attempt's execution id and the approval data. */
export const ResumeCellRequest = z.strictObject({
  executionId: EntityId,
  data: JsonValue.optional(),
});
export type ResumeCellRequest = z.infer<typeof ResumeCellRequest>;

export const ResumeCellResponse = z.object({
  status: z.literal("queued"),
  executionId: EntityId,
});
export type ResumeCellResponse = z.infer<typeof ResumeCellResponse>;

/**
 * One cell (`GET …/rows/:rowId/cells/:groupId`): where its current attempt stands, the
 * group's output values in the row, and its `details` — what each provider, step or model
 * did, `costCredits` (what the answer was charged: 0 for a miss, an error or a cached
 * answer) and `cached`.
 */
export const CellWithDetails = z.object({
  status: CellStatus,
  outcome: z.union([CellOutcome, z.null()]),
  executionId: z.string(),
  attempt: z.number().int(),
  error: z.string().nullable(),
  blockErrors: z.record(z.string(), z.string()),
  outputs: z.record(z.string(), JsonValue),
  details: z.record(z.string(), JsonValue),
  updatedAt: z.string(),
});
export type CellWithDetails = z.infer<typeof CellWithDetails>;

/**
 * A sub-workflow run inside an attempt: a `workflow` block's call (`index` null) or a
 * `foreach` item's. `id` is the child's execution id; `parentId` the execution that called
 * it (the attempt's, or another child's). `output` once completed, `error` once failed;
 * `cancelled` when a Stop, a halt or a crash ended the attempt first.
 */
export const ChildRun = z.object({
  id: z.string(),
  parentId: z.string(),
  blockId: z.string(),
  index: z.number().int().nullable(),
  workflowId: z.string(),
  status: z.enum(CHILD_RUN_STATUSES),
  output: JsonValue.nullable(),
  error: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
});
export type ChildRun = z.infer<typeof ChildRun>;

/**
 * One attempt of a cell (`GET …/cells/:groupId/attempts`). `attempt` counts the claims of
 * one execution (a re-driven attempt keeps its execution id and counts up); `outputs` are
 * the group's output values of a completed attempt, null otherwise; `resumedFrom` is the
 * execution whose finished blocks a `resume: true` run reused.
 */
export const CellAttempt = z.object({
  executionId: z.string(),
  attempt: z.number().int(),
  status: CellStatus,
  outcome: z.union([CellOutcome, z.null()]),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  outputs: z.record(z.string(), JsonValue).nullable(),
  blockErrors: z.record(z.string(), z.string()),
  /** What each provider, step or model did in this attempt, with `costCredits` and `cached`. */
  details: z.record(z.string(), JsonValue),
  resumedFrom: z.string().nullable(),
  /** Its child runs in the order they started, the first CHILDREN_LISTED of them. */
  children: z.array(ChildRun),
  /** How many child runs the attempt had in all. */
  childrenTotal: z.number().int(),
});
export type CellAttempt = z.infer<typeof CellAttempt>;

/** Newest first; the cell's current attempt (if it has one) comes first. */
export const CellAttemptsResponse = z.object({ attempts: z.array(CellAttempt) });
export type CellAttemptsResponse = z.infer<typeof CellAttemptsResponse>;
