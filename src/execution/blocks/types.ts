import type { Block, WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { sleep } from "@/domain/sleep";
import type { ChildRunEnd } from "@/domain/statuses";
import type { PaidCalls } from "@/enrichments/types";
import { isOverRateLimit } from "@/errors";
import { ExpressionError, type ExpressionScope } from "../expressions";
import type { LlmCalls } from "../llm-calls";

export interface BlockContext {
  scope: ExpressionScope;
  signal: AbortSignal;
  executionId: string;
  /** For `foreach` and `workflow` blocks: where child workflows come from. */
  children?: Children;
  /** For `enrichment` blocks: admission and pacing of paid provider calls. */
  paid?: PaidCalls;
  /** For `llm` blocks: reservation, pacing and pricing of model calls (llm-calls.ts). */
  llm?: LlmCalls;
  /**
   * The run's place in its execution, where its steps are recorded: "" for the cell's
   * workflow (the default), else the child's execution id after the cell's (`sub`,
   * `each:3:inner`).
   */
  stepScope?: string;
  /**
   * The steps of this run an earlier attempt finished (`ChildLedger.recorded`); a
   * `foreach` finds its items' records here (`<blockId>#<index>`) and adds what it records.
   */
  recorded?: Map<string, StepRecord>;
  /**
   * For `workflow` and `foreach` blocks: where their child runs, and the steps finished
   * inside them, are recorded.
   */
  lineage?: ChildLedger;
}

/** A child run as it starts: its own execution id and where it was called from. */
export interface ChildStart {
  id: string;
  /** The execution that called it (the cell's, or another child's). */
  parentId: string;
  blockId: string;
  /** The `foreach` item; null for a `workflow` block. */
  index: number | null;
  workflowId: string;
}

/** How a child run ended (as its record keeps it). */
export type ChildEnd = ChildRunEnd;

/**
 * A finished step as its execution keeps it (db/schema/execution-steps.ts): a block of a
 * child run, or a foreach item that ended `ok`.
 */
export interface StepRecord {
  /**
   * A block's: the digest of its run's inputs; an item's: of the item. A record is
   * reused only where the digest is the same.
   */
  digest: string;
  output: unknown;
  /** A block's: the edges it took. */
  taken: string[];
  /** It holds failed foreach items (its own or deeper): a resumed execution runs it again. */
  retryOnResume: boolean;
}

/**
 * A step to record: the run it belongs to (`scope`), its key, the record, and the paid
 * answers it holds (charged in the record's write, only if it is written).
 */
export interface StepWrite {
  scope: string;
  /** A block id, or `<blockId>#<index>` for a foreach item. */
  key: string;
  record: StepRecord;
  charges: readonly ChargeKey[];
}

/**
 * The record of an attempt's child runs (db/schema/child-runs.ts) and of the steps its
 * execution finished inside them (db/schema/execution-steps.ts), so a later attempt — a
 * re-drive, or a resume's new execution — reuses them instead of running them again.
 */
export interface ChildLedger {
  started(child: ChildStart): Promise<void>;
  ended(id: string, end: ChildEnd): Promise<void>;
  /**
   * The records of a run's steps it may reuse, by key: the newest of this execution and of
   * those it resumes, without an earlier execution's steps that held failed items.
   */
  recorded(scope: string): Promise<Map<string, StepRecord>>;
  /** Records a finished block of a child run (fenced) before the blocks after it start. */
  record(step: StepWrite): Promise<void>;
  /**
   * A foreach item's child run that ended `ok`: its record and its end in one write
   * (fenced), made before its slot takes the next item.
   */
  itemDone(childId: string, step: StepWrite): Promise<void>;
}

/** How one item of a fan-out ended. */
export type ItemResult = { status: "ok"; output: unknown } | { status: "error"; error: string };

/** Sub-workflows: how to load one (same workspace, the group's version setting), and the path so far. */
export interface Children {
  load(workflowId: string): Promise<WorkflowDefinition | null>;
  /** Workflow ids from the group's workflow down to the current one. */
  path: string[];
}

/**
 * What a block produced, and for a condition which port it took; or, for a block that
 * waits for something outside the run, the pause it asks for (then `output` is unused).
 */
export interface BlockResult {
  output: unknown;
  port?: "true" | "false";
  pause?: BlockPause;
  /** A resumed execution runs the block again instead of reusing its output (failed items). */
  retryOnResume?: boolean;
  /**
   * Paid answers the output holds (an enrichment's, a child's): charged by the write that
   * records the output — the block's checkpoint or step record, an item's record — or,
   * where nothing records it, passed up with the parent's result to the write that does.
   */
  charges?: readonly ChargeKey[];
  /**
   * What the block reports for the cell's `details`, by section and then by block id
   * (`{ llm: { <blockId>: … } }`); the executor merges the sections of a run's blocks.
   */
  details?: Record<string, Record<string, unknown>>;
}

/**
 * A block waiting for something outside the run (an approval, a long wait): the cell is
 * paused and the carrier leaves; a resume records the block's output and a new attempt
 * continues after it. A result, not an exception: a pause is an ordinary way for a
 * block to end, and no retry or error branch may mistake it for a failure.
 */
export interface BlockPause {
  reason: "approval" | "wait";
  /** For a wait: when it is due (epoch ms). */
  resumeAt?: number;
  /** What the block outputs when the pause ends by itself (a wait). */
  output?: unknown;
}

export type BlockRunner<B extends Block = Block> = (
  block: B,
  ctx: BlockContext,
) => Promise<BlockResult>;

/**
 * A block failure with a message meant for people. The executor retries a failed block
 * within its `retry` policy unless `retryable` is false (a 4xx other than 408/429, a bad
 * expression), and waits at least `retryAfterMs` (a provider's `Retry-After`) first.
 */
export class BlockError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly blockId: string,
    message: string,
    opts: { retryable?: boolean; retryAfterMs?: number } & ErrorOptions = {},
  ) {
    super(message, "cause" in opts ? { cause: opts.cause } : undefined);
    this.name = "BlockError";
    this.retryable = opts.retryable ?? true;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Default per-block timeouts where API.md gives one. */
export const DEFAULT_TIMEOUT_MS: Partial<Record<Block["type"], number>> = {
  http: 30_000,
  llm: 120_000,
};

/**
 * One block with its timeout and retry policy: each try gets its own timeout (the signal
 * it runs with aborts at the deadline, so an HTTP socket is closed); a retryable failure
 * waits `backoffMs · 2^(n-1)` with full jitter, and at least a provider's Retry-After,
 * then tries again, up to `retry.attempts` tries in all. A Stop ends the wait at once.
 * A call its rate limit can never let go (OverRateLimit: an llm call reserving more than
 * the whole tokens per minute) fails the same way every time, so it is not tried again.
 */
export async function withRetries(
  block: Block,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<BlockResult>,
): Promise<BlockResult> {
  const attempts = block.retry?.attempts ?? 1;
  const timeoutMs = block.timeoutMs ?? DEFAULT_TIMEOUT_MS[block.type];
  for (let attempt = 1; ; attempt++) {
    const deadline = timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined;
    const trySignal = deadline ? AbortSignal.any([signal, deadline]) : signal;
    try {
      return await run(trySignal);
    } catch (err) {
      if (signal.aborted) throw err;
      const failure =
        deadline?.aborted && timeoutMs
          ? new BlockError(block.id, `timed out after ${timeoutMs} ms`)
          : err;
      // An expression fails the same way every time, a limit it hit included; so does a
      // call heavier than its whole rate limit.
      const retryable =
        failure instanceof BlockError
          ? failure.retryable
          : !(failure instanceof ExpressionError || isOverRateLimit(failure));
      if (attempt >= attempts || !retryable) throw failure;
      const base = (block.retry?.backoffMs ?? 0) * 2 ** (attempt - 1);
      const wait = Math.max(
        Math.random() * base,
        failure instanceof BlockError ? (failure.retryAfterMs ?? 0) : 0,
      );
      await sleep(wait, signal);
    }
  }
}
