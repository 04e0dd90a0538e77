/**
 * An llm call's turn at its model's limits, shared by every worker process through the
 * process's one limiter: requests and tokens per minute per workspace and model, on one
 * weighted log keyed `<workspaceId>:llm:<model>` (each call one entry: it counts once
 * against the requests, and its tokens against the tokens). One log, not two: a call's
 * slot must keep both limits at once, and two takes would either hold one slot while
 * waiting for the other or let the call go later than its entry in one of them.
 *
 * Reserve and settle: a call takes `inputTokens + maxTokens` and, once answered,
 * `settle(real tokens)` makes its entry weigh what it used, so the unused part is free
 * again for the calls after it; `release()` removes the entry (its request too) when the
 * call was not made or got no answer. What settling does on each adapter: Postgres
 * rewrites the entry's weight under the key's row lock; Redis and Upstash rewrite the
 * entry's member in one Lua script (our own sliding log, not the library's algorithms,
 * so Upstash can give tokens back as Redis does); memory rewrites its map. On all four an
 * excess (real > reserved, a prompt whose tokens the estimate undercounted) is counted at
 * the call's own slot: later takes wait for it, but a window already filled by slots
 * reserved before the settle may hold that excess over the limit. The requests are never
 * settled.
 *
 * Why settled usage can reach the limit: a slot ahead is placed counting the reservations
 * ahead of it in full, and the limiter keeps at most 2 % of the tokens per minute reserved
 * ahead of now (slots.ts `aheadWeight`), so the rest of the window is filled by what the
 * calls really used; and in a sixth of the minute (the pace's smoothing) a call in flight
 * counts at the most this process's last calls on the key used (`partCap`, recent-use.ts),
 * not at its whole reservation, which would let a few calls in flight hold most of the
 * sixth. The minute itself counts every call in flight at its whole reservation, as a
 * provider counting `max_tokens` in flight does: with a model latency L, the settled
 * tokens can reach limit × 60·used / (60·used + L·reserved) (a second, ~100 used and
 * ~1,100 reserved: 84 %); a `maxTokens` near the real answer closes that gap.
 *
 * Cool-down: a provider's 429 (`coolLlmKey`) cools the key in the limiter, for every
 * process: no take gets a slot before it ends. This process also holds its own calls at
 * once, and a call of this process that had reserved its slot before the 429 gives the
 * slot back and waits behind the cool-down; one of another process that had reserved its
 * slot before the cool-down reached the limiter still goes at that slot.
 *
 * Invariants (pace.ts and line.ts keep them): first come, first served per process; a
 * Stop or the deadline ends the wait at once (the signal) or at the next tombstone check;
 * never fail open (a limiter that cannot answer is waited out); no slot past the deadline
 * is reserved; a call whose reservation is over the tokens per minute is refused at once
 * (OverRateLimit), never waits.
 */
import type { Plan } from "@/domain/statuses";
import { OverRateLimit } from "@/errors";
import { planLimits } from "../plans";
import { paceBaseMs } from "./hook";
import type { RateLines } from "./line";
import type { PaceOptions } from "./pace";
import type { RateLimit } from "./port";

export interface LlmGrant {
  /** When the call may go (limiter clock) and how long it waited for its turn. */
  at: number;
  waitedMs: number;
  /** The call answered and used `tokens` in all (input + output): the limit keeps that instead of the reservation. */
  settle(tokens: number): Promise<void>;
  /** The call was not made or got no answer: give back its request and tokens where the adapter can. */
  release(): Promise<void>;
}

/** The limits' window: both are per minute. */
const WINDOW_MS = 60_000;
/**
 * How far ahead an llm call's slot may be reserved, and how often a call refused for now
 * asks again. A slot is placed counting the calls in flight at their whole reservation
 * (prompt + maxTokens); with a tokens limit a few reservations wide, the next slot then
 * lies seconds ahead although those calls will use a fraction of it once answered.
 * Reserving it would hold the call there (and the line behind it) after they settle; a
 * short reach and a short poll let it go as soon as the settled log has room. The cost: a
 * read per waiting process every quarter second while the limit is really full.
 */
export const LLM_REACH_MS = 250;
export const LLM_POLL_MS = 250;
/** The longest cool-down kept, whatever a provider's retry-after says. */
const MAX_COOL_DOWN_MS = 60 * 60_000;

/** requests and tokens per minute for a plan (env CELLFLOW_LLM_REQUESTS_PER_MINUTE / CELLFLOW_LLM_TOKENS_PER_MINUTE override; defaults in API.md). */
export function llmLimits(plan: Plan): { requestsPerMinute: number; tokensPerMinute: number } {
  const limits = planLimits(plan);
  return {
    requestsPerMinute: limits.llmRequestsPerMinute,
    tokensPerMinute: limits.llmTokensPerMinute,
  };
}

export function llmRateKey(workspaceId: string, model: string): string {
  return `${workspaceId}:llm:${model}`;
}

export function llmRateLimit(plan: Plan): RateLimit {
  const { requestsPerMinute, tokensPerMinute } = llmLimits(plan);
  return { limit: requestsPerMinute, windowMs: WINDOW_MS, weightLimit: tokensPerMinute };
}

export async function paceLlmCall(
  lines: RateLines,
  workspaceId: string,
  plan: Plan,
  model: string,
  tokens: number, // the reservation: inputTokens + maxTokens
  opts: Omit<PaceOptions, "coolDowns">, // signal, deadlineAt, isStopped …
): Promise<LlmGrant> {
  const limit = llmRateLimit(plan);
  const weightLimit = limit.weightLimit ?? 0;
  const weight = Math.max(0, Math.ceil(tokens));
  if (weight > weightLimit) {
    throw new OverRateLimit(
      `This call reserves ${weight} tokens (its prompt and maxTokens), more than the ${weightLimit} tokens per minute allowed for ${model}: lower maxTokens or shorten the prompt`,
    );
  }
  const key = llmRateKey(workspaceId, model);
  const started = Date.now();
  for (;;) {
    const slot = await lines.paceSlot(key, limit, {
      baseMs: paceBaseMs(limit.limit / 60),
      // A limiter that cannot answer is asked again at least every second.
      maxMs: 1_000,
      stopCheckMs: 2_000,
      ...opts,
      // Ask again soon rather than hold a far slot: the calls in flight that push the slot
      // out settle within a second or so, giving back most of what they reserved.
      reachMs: LLM_REACH_MS,
      pollMs: LLM_POLL_MS,
      weight,
      // In a sixth of the minute, calls in flight count at what the key's calls have used.
      ...partCapOf(lines, key),
    });
    // A 429 this process saw while the call waited for its slot: going now would meet the
    // provider's refusal, so the slot goes back and the call waits behind the cool-down.
    if ((lines.coolDowns.until(key) ?? 0) > Date.now()) {
      await lines.limiter.release(key, limit, slot);
      continue;
    }
    let done = false;
    const once = () => {
      const first = !done;
      done = true;
      return first;
    };
    const waitedMs = Math.max(0, Date.now() - started);
    lines.metrics?.waited(`llm:${model}`, waitedMs);
    return {
      at: slot.at,
      waitedMs,
      async settle(used) {
        if (!once()) return;
        const real = Math.min(weightLimit, Math.max(0, Math.ceil(used)));
        lines.recentUse.add(key, real);
        await lines.limiter.settle(key, limit, slot, real);
      },
      async release() {
        if (!once()) return;
        await lines.limiter.release(key, limit, slot);
      },
    };
  }
}

function partCapOf(lines: RateLines, key: string): { partCap?: number } {
  const partCap = lines.recentUse.cap(key);
  return partCap === undefined ? {} : { partCap };
}

/** A provider 429 for this workspace and model: every worker (every process) holds its calls that long. */
export async function coolLlmKey(
  lines: RateLines,
  workspaceId: string,
  model: string,
  retryAfterMs: number,
): Promise<void> {
  const ms = Math.min(MAX_COOL_DOWN_MS, Math.max(0, Math.ceil(retryAfterMs)));
  if (!(ms > 0)) return;
  const key = llmRateKey(workspaceId, model);
  lines.coolDowns.coolDown(key, ms);
  await lines.limiter.coolDown(key, ms);
}
