/**
 * A local LLM server for tests and the bench: an http server on loopback that speaks
 * OpenAI's chat completions (`POST /v1/chat/completions`, `response_format` json_schema)
 * and Anthropic's messages (`POST /v1/messages`, structured output through a forced tool
 * call). It answers deterministically (llm-answers.ts), counts tokens exactly as the
 * reservation estimates them (input: `estimateTokens` of each message's content, the
 * system prompt included; output: `estimateTokens` of the answer's text, a tool call's
 * input as JSON), and enforces its own requests and tokens (input + output) per sliding
 * window — 60 s unless a test scales it — answering 429 with `retry-after-ms` and
 * `retry-after` when a call would go over. It can be slow (`delayMs`) or fail on demand
 * (the next n calls: a 500, an answer that is not JSON, an answer that breaks the schema).
 * Every request is recorded, so a test or the W7 bench can measure tokens per minute.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { estimateTokens } from "@/domain/llm-tokens";
import { seedOf, textAnswer, valueForSchema, violationOf } from "./llm-answers";

export type LlmDialect = "openai" | "anthropic";
export type LlmFault = "error500" | "not-json" | "schema-violation";

export interface LlmServerOptions {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** The limits' sliding window (default 60,000 ms; a test may scale it down). */
  windowMs?: number;
  /** How long each answer takes. */
  delayMs?: number;
  /** Leave `usage` out of answers (the caller must fall back to its estimate). */
  omitUsage?: boolean;
  /**
   * Send this as the answer's `usage` object, as it is, in place of the real count (a
   * provider that sends fields missing, absurd or of the wrong type).
   */
  usage?: Record<string, unknown>;
  /**
   * Answer every call with this text, as it is (with a schema: an Anthropic tool call's
   * input when it parses as JSON).
   */
  answerText?: string;
}

export interface LlmServerMessage {
  role: string;
  content: string;
}

/** One request as the server saw it (in arrival order). */
export interface LlmServerRequest {
  dialect: LlmDialect;
  model: string;
  /** The system prompt first (as role `system`, whichever dialect carried it). */
  messages: LlmServerMessage[];
  maxTokens: number | null;
  temperature: number | null;
  jsonSchema: Record<string, unknown> | null;
  /** The key it came with: `Authorization: Bearer …` or `x-api-key`. */
  apiKey: string | null;
  headers: http.IncomingHttpHeaders;
  inputTokens: number;
  /** 0 unless answered 200. */
  outputTokens: number;
  /** Arrival (epoch ms). */
  at: number;
  status: number;
}

export interface LlmServer {
  /** `http://127.0.0.1:<port>`: Anthropic's base URL. */
  url: string;
  /** `<url>/v1`: the OpenAI-compatible base URL. */
  openaiBaseUrl: string;
  requests: LlmServerRequest[];
  options: LlmServerOptions;
  /** The next `n` calls fail so (after the rate limits admit them). */
  failNext(n: number, fault: LlmFault): void;
  /** The most tokens answered within any window of `windowMs` (default the limits' window). */
  peakTokens(windowMs?: number): number;
  close(): Promise<void>;
}

interface Parsed {
  model: string;
  messages: LlmServerMessage[];
  maxTokens: number | null;
  temperature: number | null;
  jsonSchema: Record<string, unknown> | null;
}

/** A message's content as text: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: unknown) => {
      const part = p as { text?: unknown; input?: unknown; type?: unknown };
      if (typeof part.text === "string") return part.text;
      if (part.type === "tool_use") return JSON.stringify(part.input ?? null);
      return "";
    })
    .join("");
}

function parseBody(dialect: LlmDialect, body: Record<string, unknown>): Parsed {
  const raw = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const messages = raw.map((m) => ({ role: String(m.role), content: contentText(m.content) }));
  let jsonSchema: Record<string, unknown> | null = null;
  if (dialect === "openai") {
    const format = body.response_format as
      | { type?: string; json_schema?: { schema?: Record<string, unknown> } }
      | undefined;
    if (format?.type === "json_schema") jsonSchema = format.json_schema?.schema ?? null;
  } else {
    if (typeof body.system === "string") messages.unshift({ role: "system", content: body.system });
    const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
    const choice = body.tool_choice as { type?: string; name?: string } | undefined;
    const forced = choice?.type === "tool" ? tools.find((t) => t.name === choice.name) : undefined;
    if (forced) jsonSchema = (forced.input_schema as Record<string, unknown>) ?? null;
  }
  return {
    model: typeof body.model === "string" ? body.model : "",
    messages,
    maxTokens:
      typeof body.max_tokens === "number"
        ? body.max_tokens
        : typeof body.max_completion_tokens === "number"
          ? body.max_completion_tokens
          : null,
    temperature: typeof body.temperature === "number" ? body.temperature : null,
    jsonSchema,
  };
}

/** What the model says: its text, or its structured value (and its text, as JSON). */
function answerOf(
  parsed: Parsed,
  fault: LlmFault | undefined,
  given: string | undefined,
): { text: string; value?: unknown; cut: boolean } {
  if (given !== undefined) {
    try {
      return { text: given, value: JSON.parse(given), cut: false };
    } catch {
      return { text: given, cut: false };
    }
  }
  const lastUser = [...parsed.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  if (fault === "not-json")
    return { text: `Sure! Here it is: {${lastUser.slice(0, 40)}`, cut: false };
  if (!parsed.jsonSchema) return textAnswer(lastUser, parsed.maxTokens ?? 4_096);
  const value =
    fault === "schema-violation"
      ? violationOf(parsed.jsonSchema)
      : valueForSchema(parsed.jsonSchema, seedOf(lastUser));
  return { text: JSON.stringify(value), value, cut: false };
}

/** The limits' sliding window: the calls it admitted, when, and their tokens. */
class RateWindow {
  private readonly admitted: { at: number; tokens: number }[] = [];
  constructor(private readonly options: LlmServerOptions) {}

  /** 0 when a call of `tokens` fits the limits at `now`, else how long until it would. */
  waitFor(now: number, tokens: number): number {
    const { admitted, options } = this;
    const windowMs = options.windowMs ?? 60_000;
    while (admitted.length > 0 && (admitted[0]?.at ?? 0) <= now - windowMs) admitted.shift();
    let wait = 0;
    const rpm = options.requestsPerMinute;
    if (rpm !== undefined && admitted.length >= rpm) {
      wait = (admitted[admitted.length - rpm]?.at ?? now) + windowMs - now;
    }
    const tpm = options.tokensPerMinute;
    if (tpm !== undefined) {
      let used = admitted.reduce((sum, a) => sum + a.tokens, 0);
      for (const a of admitted) {
        if (used + tokens <= tpm) break;
        used -= a.tokens;
        wait = Math.max(wait, a.at + windowMs - now);
      }
    }
    return Math.max(0, wait);
  }

  admit(at: number, tokens: number): void {
    this.admitted.push({ at, tokens });
  }
}

function dialectOf(req: http.IncomingMessage): LlmDialect | null {
  if (req.method !== "POST") return null;
  if (req.url === "/v1/chat/completions") return "openai";
  if (req.url === "/v1/messages") return "anthropic";
  return null;
}

function apiKeyOf(dialect: LlmDialect, req: http.IncomingMessage): string | null {
  if (dialect === "anthropic") return (req.headers["x-api-key"] as string | undefined) ?? null;
  const auth = req.headers.authorization;
  return auth?.startsWith("Bearer ") ? auth.slice(7) : null;
}

/** A 200's body in the request's dialect. */
function answerBody(
  record: LlmServerRequest,
  answer: { text: string; value?: unknown; cut: boolean },
  options: LlmServerOptions,
  id: number,
): unknown {
  const { inputTokens, outputTokens } = record;
  const withUsage = !options.omitUsage;
  if (record.dialect === "openai") {
    return {
      id: `chatcmpl_${id}`,
      object: "chat.completion",
      created: Math.floor(record.at / 1000),
      model: record.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: answer.text, refusal: null },
          finish_reason: answer.cut ? "length" : "stop",
          logprobs: null,
        },
      ],
      ...(withUsage
        ? {
            usage: options.usage ?? {
              prompt_tokens: inputTokens,
              completion_tokens: outputTokens,
              total_tokens: inputTokens + outputTokens,
            },
          }
        : {}),
    };
  }
  const structured = record.jsonSchema !== null && answer.value !== undefined;
  return {
    id: `msg_${id}`,
    type: "message",
    role: "assistant",
    model: record.model,
    content: structured
      ? [{ type: "tool_use", id: `toolu_${id}`, name: "output", input: answer.value }]
      : [{ type: "text", text: answer.text }],
    stop_reason: structured ? "tool_use" : answer.cut ? "max_tokens" : "end_turn",
    stop_sequence: null,
    ...(withUsage
      ? { usage: options.usage ?? { input_tokens: inputTokens, output_tokens: outputTokens } }
      : {}),
  };
}

/** The most tokens answered within any `windowMs` (the requests are in arrival order). */
function peakTokens(requests: LlmServerRequest[], windowMs: number): number {
  const ok = requests.filter((r) => r.status === 200);
  let peak = 0;
  let sum = 0;
  let start = 0;
  for (const r of ok) {
    sum += r.inputTokens + r.outputTokens;
    while ((ok[start]?.at ?? 0) <= r.at - windowMs) {
      sum -= (ok[start]?.inputTokens ?? 0) + (ok[start]?.outputTokens ?? 0);
      start++;
    }
    peak = Math.max(peak, sum);
  }
  return peak;
}

export async function startLlmServer(options: LlmServerOptions = {}): Promise<LlmServer> {
  const requests: LlmServerRequest[] = [];
  const faults: LlmFault[] = [];
  const window = new RateWindow(options);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    const at = Date.now();
    const dialect = dialectOf(req);
    if (!dialect) return send(res, 404, { error: { message: "no such route" } });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return send(res, 400, errorBody(dialect, "invalid_request_error", "body is not JSON"));
    }
    const parsed = parseBody(dialect, body);
    const inputTokens = parsed.messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
    const record: LlmServerRequest = {
      dialect,
      ...parsed,
      apiKey: apiKeyOf(dialect, req),
      headers: req.headers,
      inputTokens,
      outputTokens: 0,
      at,
      status: 0,
    };
    requests.push(record);
    const reply = (status: number, payload: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, payload, headers);
    };
    if (dialect === "anthropic" && (parsed.maxTokens === null || !req.headers["anthropic-version"]))
      return reply(
        400,
        errorBody(
          dialect,
          "invalid_request_error",
          "max_tokens and anthropic-version are required",
        ),
      );
    const fault = faults.shift();
    const answer = answerOf(parsed, fault === "error500" ? undefined : fault, options.answerText);
    const outputTokens = estimateTokens(answer.text);
    const wait = window.waitFor(at, inputTokens + outputTokens);
    if (wait > 0) {
      // Refused before the fault: a 429 does not spend an injected failure.
      if (fault) faults.unshift(fault);
      return reply(429, errorBody(dialect, "rate_limit_error", "Rate limit reached"), {
        "retry-after-ms": String(wait),
        "retry-after": String(Math.ceil(wait / 1000)),
      });
    }
    window.admit(at, inputTokens + outputTokens);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    if (fault === "error500")
      return reply(500, errorBody(dialect, "api_error", "induced server error"));
    record.outputTokens = outputTokens;
    reply(200, answerBody(record, answer, options, requests.length));
  }

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString("utf8");
    });
    req.on("end", () => {
      void handle(req, res, raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    requests,
    options,
    failNext(n, fault) {
      for (let i = 0; i < n; i++) faults.push(fault);
    },
    peakTokens: (windowMs = options.windowMs ?? 60_000) => peakTokens(requests, windowMs),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function errorBody(dialect: LlmDialect, type: string, message: string): unknown {
  return dialect === "openai"
    ? { error: { message, type, code: null } }
    : { type: "error", error: { type, message } };
}

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
