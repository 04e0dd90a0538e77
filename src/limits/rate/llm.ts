/**
 * PROVISIONAL (the money branch's stand-in; the limits branch owns this file and its
 * version replaces this one at the merge, with the same signatures): paces llm calls at
 * the requests-per-minute limit only, through the process's rate lines, keyed per
 * workspace and model. Tokens are neither reserved nor settled here, and a provider's 429
 * cools the key in this process only.
 */
import type { Plan } from "@/domain/statuses";
import { assertNever } from "@/domain/statuses";
import { rateLimitKey } from "./hook";
import type { RateLines } from "./line";
import type { PaceOptions } from "./pace";

export interface LlmGrant {
  /** When the call may go (limiter clock) and how long it waited for its turn. */
  at: number;
  waitedMs: number;
  /** The call answered and used `tokens` in all (input + output): the limit keeps that instead of the reservation. */
  settle(tokens: number): Promise<void>;
  /** The call was not made or got no answer: give back its request and tokens where the adapter can. */
  release(): Promise<void>;
}

const llmKey = (workspaceId: string, model: string) => rateLimitKey(workspaceId, `llm:${model}`);

export async function paceLlmCall(
  lines: RateLines,
  workspaceId: string,
  plan: Plan,
  model: string,
  _tokens: number,
  opts: Omit<PaceOptions, "coolDowns">,
): Promise<LlmGrant> {
  const started = Date.now();
  const { requestsPerMinute } = llmLimits(plan);
  const at = await lines.pace(
    llmKey(workspaceId, model),
    { limit: requestsPerMinute, windowMs: 60_000 },
    { maxMs: 1_000, stopCheckMs: 2_000, ...opts },
  );
  return {
    at,
    waitedMs: Math.max(0, Date.now() - started),
    settle: async () => undefined,
    release: async () => undefined,
  };
}

/** A provider 429 for this workspace and model: this process holds its calls that long. */
export async function coolLlmKey(
  lines: RateLines,
  workspaceId: string,
  model: string,
  retryAfterMs: number,
): Promise<void> {
  lines.coolDowns.coolDown(llmKey(workspaceId, model), retryAfterMs);
}

/** Requests and tokens per minute for a plan (the defaults of API.md). */
export function llmLimits(plan: Plan): { requestsPerMinute: number; tokensPerMinute: number } {
  switch (plan) {
    case "free":
      return { requestsPerMinute: 60, tokensPerMinute: 40_000 };
    case "pro":
      return { requestsPerMinute: 500, tokensPerMinute: 200_000 };
    case "unlimited":
      return { requestsPerMinute: 5_000, tokensPerMinute: 2_000_000 };
    default:
      return assertNever(plan);
  }
}
