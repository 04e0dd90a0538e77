/**
 * The llm block: one chat completion from an OpenAI-compatible endpoint. Invariants: the
 * API key comes only from the workspace secret LLM_API_KEY (never from the server's own
 * environment, so one workspace cannot spend another's or the operator's key); the client
 * never retries on its own (the executor owns retries and their budget); the request is
 * bound to the block's signal; failures are BlockErrors that say whether trying again can
 * help, except an abort, which is passed on as the signal's reason.
 */
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { readEnv } from "@/config/env";
import type { LlmBlock } from "@/contracts/workflow";
import { retryAfterFromHeaders } from "@/domain/retry-after";
import { DestinationRefused, outboundFetch } from "@/net/outbound";
import { redactedExcerpt } from "@/security/redact";
import { renderTemplate } from "../expressions";
import { type BlockContext, BlockError, type BlockRunner } from "./types";

export const LLM_API_KEY_SECRET = "LLM_API_KEY";
/** Where the OpenAI client goes when neither the block nor the server names an endpoint. */
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

export const runLlm: BlockRunner<LlmBlock> = async (block, ctx) => {
  const apiKey = ctx.scope.secrets[LLM_API_KEY_SECRET];
  if (!apiKey) {
    throw new BlockError(
      block.id,
      `the llm block needs an API key: set the workspace secret ${LLM_API_KEY_SECRET} (PUT /api/secrets/${LLM_API_KEY_SECRET})`,
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
  const baseURL = block.baseUrl ?? readEnv().CELLFLOW_LLM_BASE_URL ?? DEFAULT_BASE_URL;
  const client = new OpenAI({
    apiKey,
    baseURL,
    // Explicit nulls and "off" keep the client from reading OPENAI_* variables of the
    // server's environment, which are not ours to apply to a workspace's requests.
    organization: null,
    project: null,
    logLevel: "off",
    maxRetries: 0,
    fetch: outboundFetch,
  });
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: block.model,
    messages: [{ role: "user", content: prompt }],
    ...(block.jsonSchema
      ? {
          response_format: {
            type: "json_schema",
            json_schema: { name: "output", schema: block.jsonSchema, strict: true },
          },
        }
      : {}),
  };
  let completion: OpenAI.Chat.Completions.ChatCompletion;
  try {
    completion = await client.chat.completions.create(params, { signal: ctx.signal });
  } catch (err) {
    throw requestFailure(block, ctx, hostOf(baseURL), err);
  }
  const message = completion.choices[0]?.message;
  if (message?.refusal) {
    throw new BlockError(block.id, `the model refused: ${excerpt(message.refusal, ctx)}`, {
      retryable: false,
    });
  }
  const text = message?.content;
  if (typeof text !== "string") {
    throw new BlockError(block.id, `the answer from ${hostOf(baseURL)} held no message text`);
  }
  if (!block.jsonSchema) return { output: { text, model: completion.model } };
  try {
    return { output: JSON.parse(text) as unknown };
  } catch {
    // Models without structured output (or cut off by a length limit) answer loosely; a
    // second try may well succeed, so this stays retryable.
    const cut = completion.choices[0]?.finish_reason === "length" ? " (cut off: length limit)" : "";
    throw new BlockError(
      block.id,
      `the model's answer is not valid JSON${cut}: ${excerpt(text, ctx)}`,
    );
  }
};

/** 408, 409 (provider lock contention), 429 and 5xx are worth another try; other 4xx are not. */
function requestFailure(block: LlmBlock, ctx: BlockContext, host: string, err: unknown): unknown {
  if (ctx.signal.aborted) return ctx.signal.reason;
  // The client wraps what its fetch threw; a refused destination stays refused, unretried.
  if (err instanceof OpenAI.APIConnectionError && err.cause instanceof DestinationRefused) {
    return new BlockError(block.id, err.cause.message, { retryable: false });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = err.cause instanceof Error && err.cause.message ? `: ${err.cause.message}` : "";
    return new BlockError(block.id, `the request to ${host} failed${cause}`, { retryable: true });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === "number") {
    const status = err.status;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return new BlockError(
      block.id,
      `the LLM endpoint ${host} answered ${excerpt(err.message, ctx)}`,
      {
        retryable,
        retryAfterMs: retryable ? retryAfterFromHeaders(err.headers) : undefined,
      },
    );
  }
  return new BlockError(block.id, `the LLM request failed: ${messageOf(err)}`, {
    retryable: false,
  });
}

function hostOf(baseURL: string): string {
  try {
    return new URL(baseURL).host;
  } catch {
    return "the LLM endpoint";
  }
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err !== null && typeof err === "object" && "message" in err) return String(err.message);
  return String(err);
}

/** Redacted before it is cut: a model or endpoint that echoes the key must not leave its start. */
function excerpt(text: string, ctx: BlockContext, max = 300): string {
  return redactedExcerpt(text, ctx.scope.secrets, max);
}
