/**
 * Anthropic's messages API (POST {base}/v1/messages) over `outboundFetch`, so the
 * private-network rule applies and the caller's signal cuts the request. Structured output
 * is a forced call of one tool, `output`, whose `input_schema` is the block's schema: the
 * tool call's input is the answer. One request, no retries of its own.
 */
import { retryAfterFromHeaders } from "@/domain/retry-after";
import { DestinationRefused, outboundFetch } from "@/net/outbound";
import { type ChatCall, hostOf, LlmCallError, messageOf, retryableStatus } from "./chat";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
const ANTHROPIC_VERSION = "2023-06-01";
const OUTPUT_TOOL = "output";

interface MessagesAnswer {
  model?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  usage?: { input_tokens?: unknown; output_tokens?: unknown };
}

export const anthropicMessages: ChatCall = async (request, signal, quote) => {
  const host = hostOf(request.baseUrl);
  const body = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: request.messages,
    ...(request.system ? { system: request.system } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.jsonSchema
      ? {
          tools: [
            {
              name: OUTPUT_TOOL,
              description: "Answer with the output the task asks for.",
              input_schema: request.jsonSchema,
            },
          ],
          tool_choice: { type: "tool", name: OUTPUT_TOOL },
        }
      : {}),
  };
  let response: Response;
  let raw: string;
  try {
    response = await outboundFetch(`${request.baseUrl.replace(/\/+$/, "")}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": request.apiKey,
        "anthropic-version": ANTHROPIC_VERSION,
      },
      body: JSON.stringify(body),
      signal,
    });
    raw = await response.text();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof DestinationRefused)
      throw new LlmCallError(err.message, { retryable: false });
    throw new LlmCallError(`the request to ${host} failed: ${messageOf(err)}`, {
      retryable: true,
    });
  }
  if (!response.ok) {
    const retryable = retryableStatus(response.status);
    throw new LlmCallError(
      `the LLM endpoint ${host} answered ${response.status} ${quote(errorText(raw))}`,
      {
        retryable,
        status: response.status,
        retryAfterMs: retryable ? retryAfterFromHeaders(response.headers) : undefined,
      },
    );
  }
  let answer: MessagesAnswer;
  try {
    answer = JSON.parse(raw) as MessagesAnswer;
  } catch {
    throw new LlmCallError(`the answer from ${host} is not JSON: ${quote(raw)}`, {
      retryable: true,
    });
  }
  const usage = answer.usage;
  return {
    text: answerText(answer, request.jsonSchema !== undefined),
    model: typeof answer.model === "string" ? answer.model : request.model,
    usage:
      usage !== null && typeof usage === "object"
        ? { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens }
        : null,
    cut: answer.stop_reason === "max_tokens",
  };
};

/** With a schema, the forced tool call's input as JSON; else the text blocks joined. */
function answerText(answer: MessagesAnswer, structured: boolean): string | null {
  const content = Array.isArray(answer.content) ? (answer.content as unknown[]) : [];
  const blocks = content.filter(
    (b): b is Record<string, unknown> => b !== null && typeof b === "object",
  );
  if (structured) {
    const call = blocks.find((b) => b.type === "tool_use" && b.name === OUTPUT_TOOL);
    // A model that answered in prose instead: its text is what the repair call shows it.
    if (call) return JSON.stringify(call.input ?? null);
  }
  const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string");
  return texts.length > 0 ? texts.map((b) => b.text as string).join("") : null;
}

/** Anthropic's `{ type: "error", error: { message } }`, else the body as it came. */
function errorText(raw: string): string {
  try {
    const parsed = JSON.parse(raw) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") return parsed.error.message;
  } catch {
    // not JSON: quoted as it came
  }
  return raw;
}
