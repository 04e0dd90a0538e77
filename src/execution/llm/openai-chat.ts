/**
 * OpenAI-compatible chat completions through the official client. Invariants: the client
 * never retries and never reads the server's OPENAI_* variables (the key is the
 * workspace's); every request goes out through `outboundFetch` (the private-network rule)
 * and is bound to the caller's signal; `max_tokens` is always sent, so the output cap is
 * the one the reservation counted.
 */
import OpenAI from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { retryAfterFromHeaders } from "@/domain/retry-after";
import { DestinationRefused, outboundFetch } from "@/net/outbound";
import { type ChatCall, hostOf, LlmCallError, messageOf, retryableStatus } from "./chat";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

export const openaiChat: ChatCall = async (request, signal, quote) => {
  const client = new OpenAI({
    apiKey: request.apiKey,
    baseURL: request.baseUrl,
    // Explicit nulls and "off" keep the client from reading OPENAI_* variables of the
    // server's environment, which are not ours to apply to a workspace's requests.
    organization: null,
    project: null,
    logLevel: "off",
    maxRetries: 0,
    fetch: outboundFetch,
  });
  const messages: ChatCompletionMessageParam[] = [
    ...(request.system ? [{ role: "system" as const, content: request.system }] : []),
    ...request.messages,
  ];
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages,
    max_tokens: request.maxTokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.jsonSchema
      ? {
          response_format: {
            type: "json_schema",
            json_schema: { name: "output", schema: request.jsonSchema, strict: true },
          },
        }
      : {}),
  };
  let completion: OpenAI.Chat.Completions.ChatCompletion;
  try {
    completion = await client.chat.completions.create(params, { signal });
  } catch (err) {
    throw failure(hostOf(request.baseUrl), err, quote);
  }
  const choice = completion.choices[0];
  const usage = completion.usage;
  return {
    text: typeof choice?.message?.content === "string" ? choice.message.content : null,
    model: completion.model,
    // As it came (the client's types do not check the body): callModel checks it.
    usage:
      usage !== null && typeof usage === "object"
        ? { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens }
        : null,
    cut: choice?.finish_reason === "length",
    ...(choice?.message?.refusal ? { refusal: choice.message.refusal } : {}),
  };
};

function failure(host: string, err: unknown, quote: (text: string) => string): unknown {
  // The client wraps what its fetch threw; a refused destination stays refused, unretried.
  if (err instanceof OpenAI.APIConnectionError && err.cause instanceof DestinationRefused) {
    return new LlmCallError(err.cause.message, { retryable: false });
  }
  if (err instanceof OpenAI.APIUserAbortError) return err;
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = err.cause instanceof Error && err.cause.message ? `: ${err.cause.message}` : "";
    return new LlmCallError(`the request to ${host} failed${cause}`, { retryable: true });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === "number") {
    const retryable = retryableStatus(err.status);
    return new LlmCallError(`the LLM endpoint ${host} answered ${quote(err.message)}`, {
      retryable,
      status: err.status,
      retryAfterMs: retryable ? retryAfterFromHeaders(err.headers) : undefined,
    });
  }
  return new LlmCallError(`the LLM request failed: ${messageOf(err)}`, { retryable: false });
}
