/**
 * One call to a model between the engine's gate (`LlmCalls`): asked for before the
 * request with the call's estimate, told after it how it went. Invariants: every turn
 * begun is ended exactly once — `answered` with the provider's usage (or the estimate
 * when it gave none), else `failed` (a failure, an abort), after `busy` for a 429 that
 * said how long; what `begin` throws (a cap, a Stop, the deadline) is passed on as it is,
 * with no request made. The usage charged is bounded whatever the provider says
 * (`chargedUsage`), so its price always fits the ledger and the cell's terminal write.
 * The request is a provider-call span (provider `llm:<model>`, with its tokens and credits).
 */
import type { ChargeKey } from "@/domain/charges";
import { estimateTokens } from "@/domain/llm-tokens";
import { failed, SpanKind, startSpan } from "@/tracing/spans";
import type { LlmCallPlan, LlmCalls, LlmUsage } from "../llm-calls";
import type { ChatAnswer, ChatCall, ChatRequest, ReportedUsage } from "./chat";
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
  const span = startSpan(
    "provider call",
    () => ({ "cellflow.provider": `llm:${request.model}`, "cellflow.block.id": args.plan.blockId }),
    SpanKind.CLIENT,
  );
  try {
    answer = await args.chat(request, signal, args.quote);
  } catch (err) {
    failed(span, err);
    span.end();
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
  // The span ends however the answer's accounting goes (a throw there is the cell's error).
  try {
    const usage = chargedUsage(answer, request, inputTokens);
    const priced = turn ? await turn.answered(usage) : { costCredits: 0, charge: null };
    if (span.isRecording()) {
      span.setAttribute("cellflow.llm.input_tokens", usage.inputTokens);
      span.setAttribute("cellflow.llm.output_tokens", usage.outputTokens);
      span.setAttribute("cellflow.credits", priced.costCredits);
    }
    return { answer, usage, ...priced };
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * How far the input a provider reports may go over the estimate (characters / 4): CJK
 * text and emoji take about one token a character (4× the estimate), and the provider's
 * own framing (roles, the structured output's tool or format, counted here from the
 * schema's JSON) adds some hundreds of tokens. Beyond that the count is not believed.
 */
const INPUT_OVER_ESTIMATE = 4;
const INPUT_MARGIN = 1_000;

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/**
 * The usage a call is charged and reported with. A field that is not a non-negative integer
 * (missing, NaN, a string, a fraction) is the estimate's (the input sent; estimateTokens of
 * the answer). Output is at most the call's `maxTokens` (a provider cannot legitimately
 * write more), input at most INPUT_OVER_ESTIMATE × (the estimate + the schema's tokens) +
 * INPUT_MARGIN, so a price from them stays small enough for every write that records it.
 */
export function chargedUsage(
  answer: { usage: ReportedUsage | null; text: string | null },
  request: Pick<ChatRequest, "maxTokens" | "jsonSchema">,
  inputTokens: number,
): LlmUsage {
  const reported = answer.usage;
  const input = isCount(reported?.inputTokens) ? reported.inputTokens : inputTokens;
  const output = isCount(reported?.outputTokens)
    ? reported.outputTokens
    : estimateTokens(answer.text ?? "");
  const schemaTokens = request.jsonSchema ? estimateTokens(JSON.stringify(request.jsonSchema)) : 0;
  return {
    inputTokens: Math.min(input, INPUT_OVER_ESTIMATE * (inputTokens + schemaTokens) + INPUT_MARGIN),
    outputTokens: Math.min(output, request.maxTokens),
  };
}
