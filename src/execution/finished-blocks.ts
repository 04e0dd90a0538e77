/**
 * What a workflow run keeps of each block that finished: what it reports for the cell's
 * `details` (`llm.<blockId>`), gathered section by section, and its record — the cell's
 * own block as a checkpoint (`hooks.checkpoint`), a child run's block, at any depth, as a
 * step record of the execution (`lineage.record`) under the digest of the child's inputs —
 * written before any block after it starts. Invariants: the paid answers a block's output
 * holds are charged by the write that records it; a run that records nothing (a pure
 * block, or neither a checkpoint hook nor a ledger) passes them up to its caller's write;
 * what is stored is redacted (here for checkpoints, by the ledger for step records: a
 * resumed run sees `[redacted]` where an answer echoed a secret), while the run goes on
 * with the output as it came.
 */
import type { Block, Checkpoint } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { redact } from "@/security/redact";
import type { BlockResult, ChildLedger } from "./blocks/types";

/** Persists a finished block of the cell's workflow; the blocks after it wait for this. */
export type CheckpointHook = (
  blockId: string,
  checkpoint: Checkpoint,
  charges: readonly ChargeKey[],
) => Promise<void>;

/** Pure blocks are cheaper to recompute than to record. */
const PURE = new Set<Block["type"]>(["transform", "condition", "fail"]);

/** The part of a workflow run (executor.ts) that its finished blocks are kept in. */
export interface FinishedBlocks {
  input: { lineage?: ChildLedger; hooks?: { checkpoint?: CheckpointHook } };
  scope: { secrets: Record<string, string> };
  stepScope: string;
  /** A child run: its blocks are step records, not checkpoints. */
  nested: boolean;
  digest: string;
  /** Paid answers no write of this run recorded. */
  unrecorded: ChargeKey[];
  details?: Record<string, Record<string, unknown>>;
}

/** Each section's entries side by side (they are keyed by block id, so none is lost). */
export function mergeDetails(
  run: FinishedBlocks,
  details: Record<string, Record<string, unknown>>,
): void {
  run.details ??= {};
  for (const [section, entries] of Object.entries(details))
    run.details[section] = { ...run.details[section], ...entries };
}

/**
 * A workflow cell's `details` as written: the blocks' sections and `costCredits`, what the
 * cell's llm calls cost (summed to the milli-credit, as they were charged), like an
 * enrichment cell's.
 */
export function cellDetails(
  details: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  let milli = 0;
  for (const entry of Object.values(details.llm ?? {})) {
    const cost = (entry as { costCredits?: unknown }).costCredits;
    if (typeof cost === "number" && Number.isFinite(cost)) milli += Math.round(cost * 1000);
  }
  return { ...details, costCredits: milli / 1000 };
}

export async function recordFinished(
  run: FinishedBlocks,
  block: Block,
  result: BlockResult,
  taken: string[],
): Promise<void> {
  const charges = result.charges ?? [];
  const lineage = run.nested ? run.input.lineage : undefined;
  const checkpoint = run.nested ? undefined : run.input.hooks?.checkpoint;
  if (PURE.has(block.type) || !(lineage || checkpoint)) run.unrecorded.push(...charges);
  else if (lineage)
    await lineage.record({
      scope: run.stepScope,
      key: block.id,
      record: {
        digest: run.digest,
        output: result.output,
        taken,
        retryOnResume: result.retryOnResume ?? false,
      },
      charges,
    });
  else
    await checkpoint?.(
      block.id,
      {
        output: redact(result.output, run.scope.secrets),
        taken,
        ...(result.retryOnResume ? { retryOnResume: true as const } : {}),
      },
      charges,
    );
}
