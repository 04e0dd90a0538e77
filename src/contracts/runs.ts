import { z } from "zod";
import {
  CELL_STATUSES,
  type CellStatus,
  DISPATCH_STATUSES,
  HALT_REASONS,
  RUN_MODES,
} from "@/domain/statuses";
import { ClientId, CreditAmount, EntityId } from "./common";
import { Where } from "./where";

const RunRequestFields = z.strictObject({
  groupIds: z.array(ClientId).min(1).max(100).optional(),
  mode: z.enum(RUN_MODES),
  /**
   * With `incomplete` or `failed`: an error/cancelled cell starts again from where its
   * last attempt stopped (the blocks with effects it finished are not run again).
   */
  resume: z.boolean().optional(),
  rowIds: z.array(EntityId).min(1).max(10_000).optional(),
  /** Only rows matching every condition (evaluated in SQL on each stamping page). */
  where: Where.optional(),
  limit: z.number().int().min(1).max(10_000_000).optional(),
  /** Rows in flight at once; defaults to the plan's window and may not exceed it. */
  window: z.number().int().min(1).max(1_000).optional(),
  /** Count what the run would stamp and estimate its credits; nothing is written. */
  dryRun: z.boolean().optional(),
  /**
   * The run's credit cap (credits to 1/1000, like every credit amount): once its paid calls
   * would pass it, the run halts (`haltReason: "run_credit_cap"`); a call is reserved
   * against it before it is made.
   */
  maxCredits: CreditAmount.optional(),
  /**
   * The run's budget per row: a paid call that would take what the row's cells of this run
   * are charged or hold reserved past it is not made, and its cell ends `completed` with
   * outcome `over_budget`, outputs blank; the other rows go on. Absent: the table's default.
   */
  maxCreditsPerRow: CreditAmount.optional(),
  /**
   * Mode `stale` (and only it): a completed cell whose last attempt ended more than this
   * many hours ago is run again, with the cells never run.
   */
  staleAfterHours: z.number().positive().max(1_000_000).optional(),
});

type ModeFields = Pick<z.infer<typeof RunRequestFields>, "mode" | "resume" | "staleAfterHours">;

/**
 * The rules between a request's mode and its options: `resume` only with the modes that
 * re-run error/cancelled cells, `staleAfterHours` with mode `stale` and only with it.
 * Shared with schedules, whose body is a run request's.
 */
export function modeRules<T extends z.ZodType<ModeFields>>(schema: T) {
  return schema
    .refine((r) => !r.resume || r.mode === "incomplete" || r.mode === "failed", {
      path: ["resume"],
      message:
        'resume needs mode "incomplete" or "failed" ("all", "new" and "stale" do not resume)',
    })
    .refine((r) => (r.mode === "stale") === (r.staleAfterHours !== undefined), {
      path: ["staleAfterHours"],
      message:
        'mode "stale" needs staleAfterHours (a number of hours > 0), and no other mode takes it',
    });
}

export const CreateRunRequest = modeRules(RunRequestFields);
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

/** A schedule's run: the body of `POST /runs` without `rowIds` and `dryRun`. */
export const ScheduledRunFields = RunRequestFields.omit({ rowIds: true, dryRun: true });

/**
 * The `Idempotency-Key` header of `POST /runs` and of run webhooks: per table, honoured
 * 24 h. The same key with the same request answers the run it started; with another
 * request it is a 409.
 */
export const IdempotencyKey = z
  .string()
  .min(1, "must not be empty")
  .max(255, "must be at most 255 characters");

export const RunRequestHeaders = z.object({
  "idempotency-key": IdempotencyKey.optional().describe(
    "Makes the request safe to retry: the same key (per table, for 24 h) with the same request answers the run it started (`Cellflow-Replayed: true`), also while that run is being created; with another request → 409. A dry run ignores it.",
  ),
});

export const CancelRunsRequest = z.strictObject({
  dispatchId: EntityId.optional(),
  rowIds: z.array(EntityId).min(1).max(10_000).optional(),
  groupIds: z.array(ClientId).min(1).max(100).optional(),
  /** Only rows matching every condition now (the Stop covers those rows). */
  where: Where.optional(),
});
export type CancelRunsRequest = z.infer<typeof CancelRunsRequest>;

/** A group whose credits the estimate cannot tell, and why. */
export const UnknownCredits = z.object({ groupId: z.string(), reason: z.string() });
export type UnknownCredits = z.infer<typeof UnknownCredits>;

/**
 * The answer to a dry run. `estimatedCredits` counts each paid call the stamped cells
 * would make once (a cache hit or a skipped input costs nothing, so they may cost less);
 * `estimate` is `lower_bound` when some group's calls cannot be counted (`unknown` names
 * them), e.g. enrichment blocks inside a `foreach`, whose item count is known only then.
 * An llm block's call is priced from each row's rendered prompt as it would be reserved;
 * where the prompt's values are not all known it is a lower bound too.
 * `skippedByCondition`: cells on rows where their group's `runIf` does not hold now (they
 * would end `condition_not_met`, calling nothing): counted in `cells`, charged 0.
 */
export const RunEstimate = z.object({
  rows: z.number().int(),
  cells: z.number().int(),
  skippedByCondition: z.number().int(),
  estimatedCredits: z.number(),
  /**
   * The per-row budget the run would have (the request's, or the table's default; null:
   * none). Under it each row's credits are at most the budget: `estimatedCredits` is at
   * most `rows` × budget, and `rowBudgetCapped` says that bound lowered it.
   */
  maxCreditsPerRow: z.number().nullable(),
  rowBudgetCapped: z.boolean(),
  estimate: z.enum(["complete", "lower_bound"]),
  unknown: z.array(UnknownCredits),
  /**
   * Groups whose credits are the most their cells can cost, not what they will: a
   * waterfall counts every paid step, and a cell pays only up to the step that wins.
   */
  upperBound: z.array(UnknownCredits),
  groups: z.array(
    z.object({
      groupId: z.string(),
      cells: z.number().int(),
      credits: z.number(),
      /** Cells the enrichment result cache would serve: no call, no credit. */
      cached: z.number().int(),
      /** Cells whose run condition does not hold on their row now: no call, no credit. */
      skippedByCondition: z.number().int(),
      /** `credits` is an upper bound (a waterfall: every paid step counted). */
      upperBound: z.literal(true).optional(),
    }),
  ),
});
export type RunEstimate = z.infer<typeof RunEstimate>;

/**
 * The answer to starting a run (202). `stamping` is true when the run covers more rows
 * than one request stamps: a background job stamps the rest, and `GET /runs/:id` shows
 * the final `stamped`.
 */
export const RunStarted = z.object({
  dispatchId: z.string(),
  stamped: z.number().int(),
  stamping: z.boolean(),
});
export type RunStarted = z.infer<typeof RunStarted>;

/** A run's cells by status: one count for each status, in the tuple's order. */
export const RunCounts = z.object(
  Object.fromEntries(CELL_STATUSES.map((s) => [s, z.number().int()])) as Record<
    CellStatus,
    z.ZodNumber
  >,
);
export type RunCounts = z.infer<typeof RunCounts>;

/**
 * A run (`GET /runs/:dispatchId`). `counts` are its cells by status now; `haltReason`
 * says why a `halted` run stopped; `creditsUsed` is what its cells were charged (always
 * counted: only answers that were recorded are charged, see docs/api.md "Money").
 */
export const RunView = z.object({
  id: z.string(),
  status: z.enum(DISPATCH_STATUSES),
  mode: z.enum(RUN_MODES),
  groupIds: z.array(z.string()),
  window: z.number().int(),
  stamped: z.number().int(),
  stamping: z.boolean(),
  counts: RunCounts,
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  haltReason: z.enum(HALT_REASONS).nullable(),
  /** The run's credit cap (credits to 1/1000; null: none). */
  maxCredits: z.number().nullable(),
  /** The run's per-row budget (its own, or the table's default when it was created). */
  maxCreditsPerRow: z.number().nullable(),
  creditsUsed: z.number(),
  /** Mode `stale`: the age in hours past which a completed cell was run again (else null). */
  staleAfterHours: z.number().nullable(),
});
export type RunView = z.infer<typeof RunView>;

/** Active runs first, then newest first. */
export const RunList = z.object({ runs: z.array(RunView) });
export type RunList = z.infer<typeof RunList>;

/** How many cells a Stop cancelled. */
export const RunsCancelled = z.object({ cancelled: z.number().int() });
export type RunsCancelled = z.infer<typeof RunsCancelled>;
