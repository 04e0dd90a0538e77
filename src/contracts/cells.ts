import { z } from "zod";
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
  resumedFrom: z.string().nullable(),
});
export type CellAttempt = z.infer<typeof CellAttempt>;

/** Newest first; the cell's current attempt (if it has one) comes first. */
export const CellAttemptsResponse = z.object({ attempts: z.array(CellAttempt) });
export type CellAttemptsResponse = z.infer<typeof CellAttemptsResponse>;
