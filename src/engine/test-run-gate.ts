/**
 * The gate in front of a test run's paid calls (`POST /api/workflows/:id/test`): the
 * enrichment blocks' provider calls (`PaidCalls`) and the llm blocks' model calls
 * (`LlmCalls`), at any depth. A test run has no cell, so its response is what records the
 * answers. Invariants:
 * - Each charge key is reserved under the workspace's month cap before its first call
 *   (store/usage/reserve-test-call.ts); a call the cap refuses is not made, and the whole
 *   run ends (`onHalt` aborts it before the halt is thrown, so no block can turn it into a
 *   failure of its own or an error branch).
 * - A reservation becomes a charge only at the run's end (`settle`), for the paid answers
 *   that a finished block holds — the run's own blocks through the checkpoint hook, a
 *   sub-workflow's blocks and items through the ledger — in one transaction with the release
 *   of everything else; a call with no answer gives its reservation back at once.
 * - An llm call reserves the price of its estimate (input tokens plus `maxTokens`) and is
 *   charged the price of its real usage: the turn a cell's call takes (llm-turn.ts), keyed
 *   under the execution whose block calls (a sub-workflow's or a foreach item's own).
 * - Every call then waits its turn at the workspace's shared rate limit until the run's
 *   signal aborts (its time cap, the client leaving), under the key a cell's call uses: an
 *   enrichment's provider; an llm call at the requests and tokens per minute of its model,
 *   one budget with the table's cells (settled with its real tokens, a 429 cooling the key
 *   for every worker).
 */
import type { Db } from "@db/client";
import type { ChargeKey } from "@/domain/charges";
import type { Plan } from "@/domain/statuses";
import type { PaidCalls } from "@/enrichments/types";
import { UsageLimitHalt } from "@/errors";
import type { ChildLedger } from "@/execution/blocks/types";
import type { RunHooks } from "@/execution/executor";
import type { LlmCalls } from "@/execution/llm-calls";
import { planLimits } from "@/limits/plans";
import { limiterHook, providerRetryAfter } from "@/limits/rate/hook";
import type { RateLines } from "@/limits/rate/line";
import { milliOf } from "@/store/usage/amounts";
import { releaseTestCall } from "@/store/usage/release-test-run";
import { reserveTestCall } from "@/store/usage/reserve-test-call";
import { settleTestRun } from "@/store/usage/settle-test-run";
import { beginLlmTurn } from "./llm-turn";

export interface TestRun {
  workspaceId: string;
  plan: Plan;
  /** The test run's execution id: its charge keys' id, and its entries' "attempt". */
  testRunId: string;
  /** When the run's time cap passes (epoch ms): the pacing reserves no slot past it. */
  deadlineAt: number;
  /** Ends the whole run (aborts its signal) before the halt is thrown. */
  onHalt(halt: UsageLimitHalt): void;
}

export interface TestRunGate {
  paid: PaidCalls;
  llm: LlmCalls;
  /** The run's own finished blocks: their paid answers are kept for `settle`. */
  checkpoint: NonNullable<RunHooks["checkpoint"]>;
  /** Sub-workflow runs: their finished blocks' and items' paid answers are kept for `settle`. */
  ledger: ChildLedger;
  /**
   * Charges the paid answers of every finished block, releases everything else; returns
   * the credits charged. A client that left is charged too: the answers were delivered
   * to the run, and its response would have shown them.
   */
  settle(): Promise<number>;
}

const keyOf = (c: ChargeKey) => JSON.stringify([c.chargeId, c.source]);

type Deps = { db: Db; lines: RateLines };

/** The keys the run holds reserved. */
class Holds {
  private readonly held = new Set<string>();
  /** Whether the run ever reserved: a run that did not has nothing to settle or release. */
  reservedAny = false;

  constructor(
    private readonly db: Db,
    private readonly run: TestRun,
  ) {}

  async reserve(charge: ChargeKey, milli: number): Promise<void> {
    const key = keyOf(charge);
    if (milli <= 0 || this.held.has(key)) return;
    const r = await reserveTestCall(this.db, {
      workspaceId: this.run.workspaceId,
      testRunId: this.run.testRunId,
      charge,
      milli,
      monthlyCredits: planLimits(this.run.plan).monthlyCredits,
    });
    if (!r.ok) {
      const halt = new UsageLimitHalt();
      this.run.onHalt(halt);
      throw halt;
    }
    this.held.add(key);
    this.reservedAny = true;
  }

  async release(charge: ChargeKey): Promise<void> {
    if (!this.held.delete(keyOf(charge))) return;
    // Best effort: what this misses, `settle` releases at the run's end.
    await releaseTestCall(this.db, { testRunId: this.run.testRunId, charge }).catch(
      () => undefined,
    );
  }
}

function enrichmentCalls({ lines }: Deps, run: TestRun, holds: Holds): PaidCalls {
  const pace = limiterHook(run.workspaceId, run.plan, { lines, deadlineAt: run.deadlineAt });
  return ({ source, chargeId, credits }) => {
    const charge = { chargeId, source };
    return {
      charge,
      beforeCall: async (providerId, signal) => {
        await holds.reserve(charge, milliOf(credits));
        return pace(providerId, signal);
      },
      release: () => holds.release(charge),
      providerBusy: (providerId, retryAfterMs) =>
        providerRetryAfter(lines, run.workspaceId, providerId, retryAfterMs),
    };
  };
}

function llmCalls({ lines }: Deps, run: TestRun, holds: Holds): LlmCalls {
  return {
    begin: (plan, signal) =>
      beginLlmTurn(
        {
          lines,
          workspaceId: run.workspaceId,
          plan: run.plan,
          executionId: run.testRunId,
          money: holds,
          pace: { signal, deadlineAt: run.deadlineAt },
        },
        plan,
      ),
  };
}

export function testRunGate(deps: Deps, run: TestRun): TestRunGate {
  const holds = new Holds(deps.db, run);
  /** The paid answers finished blocks hold, by key. */
  const answered = new Map<string, ChargeKey>();
  const keep = (charges: readonly ChargeKey[]) => {
    for (const c of charges) answered.set(keyOf(c), c);
  };
  return {
    paid: enrichmentCalls(deps, run, holds),
    llm: llmCalls(deps, run, holds),
    checkpoint: async (_blockId, _checkpoint, charges) => keep(charges),
    ledger: {
      started: async () => {},
      ended: async () => {},
      // Nothing to reuse: a test run is never resumed.
      recorded: async () => new Map(),
      record: async (step) => keep(step.charges),
      itemDone: async (_childId, step) => keep(step.charges),
    },
    settle: async () => {
      if (!holds.reservedAny) return 0;
      // An llm answer's charge carries its real amount (`milli`).
      const charges = [...answered.values()];
      const milli = await settleTestRun(deps.db, { testRunId: run.testRunId, charges });
      return milli / 1000;
    },
  };
}
