/**
 * The llm block: one answer from a model, through an OpenAI-compatible endpoint or
 * Anthropic's messages API. Invariants: the API key comes only from a workspace secret
 * (LLM_API_KEY, ANTHROPIC_API_KEY; never from the server's own environment, so one
 * workspace cannot spend another's or the operator's key); no client retries on its own
 * (the executor owns retries and their budget); every call is bound to the block's signal
 * and goes through the engine's gate when there is one (`ctx.llm`: reserved and paced
 * before, settled after); an answer that fails its schema is asked again once, with the
 * errors, and then fails the block for good; failures are BlockErrors that say whether
 * trying again can help, except an abort, passed on as the signal's reason, and what the
 * gate throws, passed on as it is. An answer at temperature 0 is reused from the
 * workspace's result cache when the gate offers one; a reused answer costs nothing.
 */
import { readEnv } from "@/config/env";
import type { LlmBlock } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { DEFAULT_MAX_TOKENS } from "@/domain/llm-tokens";
import { redactedExcerpt } from "@/security/redact";
import { renderTemplate } from "../expressions";
import { lookupAnswer } from "../llm/answer-cache";
import { ANTHROPIC_DEFAULT_BASE_URL, anthropicMessages } from "../llm/anthropic-messages";
import { type ChatCall, type ChatRequest, hostOf, LlmCallError, messageOf } from "../llm/chat";
import { AnswerTooLong, checkJsonAnswer, InvalidSchema, validatorFor } from "../llm/json-answer";
import { callModel, type ModelCall } from "../llm/model-call";
import { OPENAI_DEFAULT_BASE_URL, openaiChat } from "../llm/openai-chat";
import type { LlmProvider } from "../llm-calls";
import { type BlockContext, BlockError, type BlockResult, type BlockRunner } from "./types";

export const LLM_API_KEY_SECRET = "LLM_API_KEY";
export const ANTHROPIC_API_KEY_SECRET = "ANTHROPIC_API_KEY";

const PROVIDERS: Record<LlmProvider, { secret: string; chat: ChatCall; baseUrl(): string }> = {
  openai: {
    secret: LLM_API_KEY_SECRET,
    chat: openaiChat,
    baseUrl: () => readEnv().CELLFLOW_LLM_BASE_URL ?? OPENAI_DEFAULT_BASE_URL,
  },
  anthropic: {
    secret: ANTHROPIC_API_KEY_SECRET,
    chat: anthropicMessages,
    baseUrl: () => readEnv().CELLFLOW_ANTHROPIC_BASE_URL ?? ANTHROPIC_DEFAULT_BASE_URL,
  },
};

/** The cell's `details.llm.<blockId>`: what the block's calls took (a repair included). */
export interface LlmDetails {
  model: string;
  inputTokens: number;
  outputTokens: number;
  costCredits: number;
  /** Reused from the result cache: no call was made and nothing is charged. */
  cached: boolean;
}

/** What the block's calls came to: its output and what they took. */
interface Asked {
  output: unknown;
  calls: ModelCall[];
}

export const runLlm: BlockRunner<LlmBlock> = async (block, ctx) => {
  const provider = block.provider ?? "openai";
  const { secret, chat, baseUrl } = PROVIDERS[provider];
  const apiKey = ctx.scope.secrets[secret];
  if (!apiKey) {
    throw new BlockError(
      block.id,
      `the llm block needs an API key: set the workspace secret ${secret} (PUT /api/secrets/${secret})`,
      { retryable: false },
    );
  }
  let prompt: string;
  try {
    prompt = await renderTemplate(block.prompt, ctx.scope);
  } catch (err) {
    throw new BlockError(block.id, `the template in the prompt failed: ${messageOf(err)}`, {
      retryable: false,
    });
  }
  const request: ChatRequest = {
    baseUrl: block.baseUrl ?? baseUrl(),
    apiKey,
    model: block.model,
    system: block.system,
    messages: [{ role: "user", content: prompt }],
    temperature: block.temperature,
    maxTokens: block.maxTokens ?? DEFAULT_MAX_TOKENS,
    jsonSchema: block.jsonSchema,
  };
  const cache = block.temperature === 0 ? ctx.llm?.cache : undefined;
  if (!cache) return resultOf(block, await ask(block, ctx, provider, chat, request));
  const lookup = await lookupAnswer(
    cache,
    {
      provider,
      baseUrl: request.baseUrl,
      model: request.model,
      system: request.system ?? null,
      prompt,
      jsonSchema: request.jsonSchema ?? null,
      maxTokens: request.maxTokens,
    },
    ctx.signal,
  );
  if (lookup.kind === "hit") {
    const { output, inputTokens, outputTokens } = lookup.answer;
    return {
      output,
      details: detailsOf(block, { inputTokens, outputTokens, costCredits: 0, cached: true }),
    };
  }
  let asked: Asked;
  try {
    asked = await ask(block, ctx, provider, chat, request);
  } catch (err) {
    await lookup.drop();
    throw err;
  }
  const result = resultOf(block, asked);
  const { inputTokens, outputTokens } = usageOf(asked.calls);
  // Served to others once the write that records this block charges its calls.
  await lookup.keep({ output: asked.output, inputTokens, outputTokens }, result.charges ?? []);
  return result;
};

/** The answer call and, when its JSON fails the schema, the one repair call. */
async function ask(
  block: LlmBlock,
  ctx: BlockContext,
  provider: LlmProvider,
  chat: ChatCall,
  request: ChatRequest,
): Promise<Asked> {
  let validate: ReturnType<typeof validatorFor> | undefined;
  try {
    validate = block.jsonSchema ? validatorFor(block.jsonSchema) : undefined;
  } catch (err) {
    if (err instanceof InvalidSchema)
      throw new BlockError(block.id, err.message, { retryable: false });
    throw err;
  }
  const call = (kind: "answer" | "repair", req: ChatRequest) =>
    callModel({
      chat,
      request: req,
      plan: { blockId: block.id, call: kind, provider },
      gate: ctx.llm,
      signal: ctx.signal,
      quote: (text) => excerpt(text, ctx),
    }).catch((err: unknown) => {
      if (err instanceof LlmCallError)
        throw new BlockError(block.id, err.message, {
          retryable: err.retryable,
          retryAfterMs: err.retryAfterMs,
        });
      throw err;
    });
  const first = await call("answer", request);
  const { answer } = first;
  if (answer.refusal) {
    throw new BlockError(block.id, `the model refused: ${excerpt(answer.refusal, ctx)}`, {
      retryable: false,
    });
  }
  if (!validate) {
    if (answer.text === null)
      throw new BlockError(
        block.id,
        `the answer from ${hostOf(request.baseUrl)} held no message text`,
      );
    return { output: { text: answer.text, model: answer.model }, calls: [first] };
  }
  const check = (text: string | null) => {
    if (text === null) return { ok: false as const, errors: "no answer" };
    try {
      return checkJsonAnswer(text, validate);
    } catch (err) {
      // Not worth a repair: the model would be shown all of it again.
      if (err instanceof AnswerTooLong)
        throw new BlockError(block.id, err.message, { retryable: false });
      throw err;
    }
  };
  const checked = check(answer.text);
  if (checked.ok) return { output: checked.value, calls: [first] };
  const second = await call("repair", {
    ...request,
    messages: [
      ...request.messages,
      { role: "assistant", content: answer.text || "(no answer)" },
      { role: "user", content: repairPrompt(checked.errors) },
    ],
  });
  const repaired = second.answer;
  const rechecked = check(repaired.text);
  if (rechecked.ok) return { output: rechecked.value, calls: [first, second] };
  const cut = repaired.cut ? " (cut off: length limit)" : "";
  throw new BlockError(
    block.id,
    `the model's answer does not match the jsonSchema after one repair${cut}: ${rechecked.errors}; answer: ${excerpt(repaired.text ?? "", ctx)}`,
    { retryable: false },
  );
}

function repairPrompt(errors: string): string {
  return `Your answer does not match the required JSON schema: ${errors}. Answer again with only the JSON value, matching the schema.`;
}

function resultOf(block: LlmBlock, asked: Asked): BlockResult {
  const charges = asked.calls.map((c) => c.charge).filter((c): c is ChargeKey => c !== null);
  const costCredits = asked.calls.reduce((sum, c) => sum + c.costCredits, 0);
  return {
    output: asked.output,
    ...(charges.length > 0 ? { charges } : {}),
    details: detailsOf(block, { ...usageOf(asked.calls), costCredits, cached: false }),
  };
}

function usageOf(calls: ModelCall[]): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const c of calls) {
    inputTokens += c.usage.inputTokens;
    outputTokens += c.usage.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/** Under `llm.<blockId>`, where the executor gathers every llm block's for the cell. */
function detailsOf(
  block: LlmBlock,
  took: Omit<LlmDetails, "model">,
): Record<string, Record<string, unknown>> {
  const details: LlmDetails = { model: block.model, ...took };
  return { llm: { [block.id]: details } };
}

/** Redacted before it is cut: a model or endpoint that echoes the key must not leave its start. */
function excerpt(text: string, ctx: BlockContext, max = 300): string {
  return redactedExcerpt(text, ctx.scope.secrets, max);
}
