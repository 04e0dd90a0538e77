/**
 * One call to a model between the engine's gate (`LlmCalls`): asked for before the
 * request with the call's estimate, told after it how it went. Invariants: every turn
 * begun is ended exactly once — `answered` with the provider's usage (or the estimate
 * when it gave none), else `failed` (a failure, an abort), after `busy` for a 429 that
 * said how long; what `begin` throws (a cap, a Stop, the deadline) is passed on as it is,
 * with no request made.
 */
import type { ChargeKey } from "@/domain/charges";
import { estimateTokens } from "@/domain/llm-tokens";
import type { LlmCallPlan, LlmCalls, LlmUsage } from "../llm-calls";
import type { ChatAnswer, ChatCall, ChatRequest } from "./chat";
import { LlmCallError } from "./chat";

export interface ModelCall {
  answer: ChatAnswer;
  usage: LlmUsage;
  costCredits: number;
  charge: ChargeKey | null;
}

/** What the call is counted as before it is made: every message sent, the system one too. */
export function inputTokensOf(request: Pick<ChatRequest, "system" | "messages">): number {
  let tokens = request.system ? estimateTokens(request.system) : 0;
  for (const m of request.messages) tokens += estimateTokens(m.content);
  return tokens;
}

export async function callModel(args: {
  chat: ChatCall;
  request: ChatRequest;
  plan: Pick<LlmCallPlan, "blockId" | "call" | "provider">;
  gate: LlmCalls | undefined;
  signal: AbortSignal;
  quote: (text: string) => string;
}): Promise<ModelCall> {
  const { request, signal } = args;
  const inputTokens = inputTokensOf(request);
  const turn = await args.gate?.begin(
    { ...args.plan, model: request.model, inputTokens, maxTokens: request.maxTokens },
    signal,
  );
  let answer: ChatAnswer;
  try {
    answer = await args.chat(request, signal, args.quote);
  } catch (err) {
    if (turn) {
      if (
        !signal.aborted &&
        err instanceof LlmCallError &&
        err.status === 429 &&
        err.retryAfterMs !== undefined
      )
        await turn.busy(err.retryAfterMs);
      await turn.failed();
    }
    throw signal.aborted ? signal.reason : err;
  }
  const usage = answer.usage ?? {
    inputTokens,
    outputTokens: estimateTokens(answer.text ?? ""),
  };
  const priced = turn ? await turn.answered(usage) : { costCredits: 0, charge: null };
  return { answer, usage, ...priced };
}
