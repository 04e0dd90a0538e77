/**
 * The gate in front of an attempt's llm calls (the llm block's `ctx.llm`). Invariants, as
 * for enrichments (paid-calls.ts): each call's charge key (`llm:<model>@<blockId>`,
 * `#repair` after it for the schema-repair call, under the execution whose block calls) is
 * admitted — the call's estimated cost (its input tokens at the model's input price plus
 * its output cap at the output price, CELLFLOW_LLM_PRICES) reserved under every cap — before
 * the call, or the attempt ends through `onHalt` and the error is thrown (the month's
 * credits or the run's cap: halted, the cell un-run; the row's budget: the cell
 * `over_budget`; a cell no longer held: no call); a model without a price reserves and
 * charges nothing. Then the call waits its turn at the workspace's limits for the model
 * (requests and tokens per minute), as long as the attempt lives. After the answer the
 * charge is priced from the real usage and goes, with the amount (`milli`), to the fenced
 * write that records the block's output, which charges it in place of the estimate
 * (store/usage/settle.ts); a call without an answer gives its reservation and its turn
 * back at once (the trigger would at the attempt's end); the turn itself is llm-turn.ts's,
 * shared with a test run's gate. Where runs are separate processes
 * (trigger.dev), a per-process limiter is refused before anything is reserved or called.
 * Per attempt it only builds closures: nothing is read or written until a block calls.
 */
import type { ChargeKey } from "@/domain/charges";
import { LostAuthority, RowBudgetExceeded, SharedLimiterRequired, UsageLimitHalt } from "@/errors";
import type { LlmCallPlan, LlmCalls, LlmTurn } from "@/execution/llm-calls";
import { attemptSuperseded } from "@/store/engine-reads";
import { releaseCharge } from "@/store/usage/release";
import { admitCall } from "./admission";
import { beginLlmTurn, type LlmMoney } from "./llm-turn";
import { type PaidAttempt, type PaidEngine, paidCallSettings } from "./paid-calls";

export function llmCalls(
  engine: PaidEngine,
  a: PaidAttempt,
  onHalt: (
    halt: UsageLimitHalt | RowBudgetExceeded | SharedLimiterRequired | LostAuthority,
  ) => void,
  opts: {
    /** The attempt's deadline (epoch ms): the pacing reserves no turn past it. */
    deadlineAt?: number;
    onCacheError?: (err: unknown) => void;
  } = {},
): LlmCalls {
  const { db } = engine.locks;
  const cell = {
    rowId: a.rowId,
    groupId: a.groupId,
    executionId: a.executionId,
    attempt: a.attempt,
  };
  const { cache, refusal } = paidCallSettings(engine, a.workspaceId, opts.onCacheError);
  const money: LlmMoney = {
    reserve: async (charge, milli) => {
      const credits = milli / 1000;
      const admission = await admitCall(db, { ...a, charge, credits });
      if (admission === "admitted") return;
      const end =
        admission === "halted"
          ? new UsageLimitHalt()
          : admission === "over_budget"
            ? new RowBudgetExceeded(charge.source, credits)
            : new LostAuthority("stale");
      onHalt(end);
      throw end;
    },
    // Best effort: what this misses, the trigger releases when the attempt ends.
    release: (charge: ChargeKey) => releaseCharge(db, { cell, charge }).catch(() => undefined),
  };

  async function begin(plan: LlmCallPlan, signal: AbortSignal): Promise<LlmTurn> {
    // Before the reservation: a refused call is neither reserved nor made.
    if (refusal) {
      const refused = new SharedLimiterRequired(refusal);
      onHalt(refused);
      throw refused;
    }
    return beginLlmTurn(
      {
        lines: engine.lines,
        workspaceId: a.workspaceId,
        plan: a.plan,
        executionId: a.executionId,
        money,
        pace: {
          signal,
          ...(opts.deadlineAt !== undefined ? { deadlineAt: opts.deadlineAt } : {}),
          isStopped: () => attemptSuperseded(db, cell),
        },
      },
      plan,
    );
  }

  return { begin, ...(cache ? { cache } : {}) };
}
