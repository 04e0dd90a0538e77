/**
 * What an llm block asks of a provider's API, whichever dialect it speaks, and how a call
 * fails. Invariant: an adapter makes exactly one request (no retries of its own: the
 * executor owns them), bound to the caller's signal, and reports a failure as an
 * `LlmCallError` that says whether trying again can help and how long the provider asked
 * to wait; a refused destination is never retryable.
 */
export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  /** Where the API lives (the block's, the server's, or the provider's own). */
  baseUrl: string;
  apiKey: string;
  model: string;
  system?: string | undefined;
  messages: ChatMessage[];
  temperature?: number | undefined;
  maxTokens: number;
  /** Asks for a JSON answer of this schema (response_format, or a forced tool call). */
  jsonSchema?: Record<string, unknown> | undefined;
}

export interface ReportedUsage {
  inputTokens: unknown;
  outputTokens: unknown;
}

export interface ChatAnswer {
  /** The answer's text; with a schema, its JSON (a tool call's input is serialised). */
  text: string | null;
  /** The model that answered, as the provider names it. */
  model: string;
  /**
   * The provider's count as it came, when it gave one: not trusted (a field may be missing,
   * of another type or absurd); callModel checks and bounds it before anything is charged.
   */
  usage: ReportedUsage | null;
  /** The answer stopped at the token cap. */
  cut: boolean;
  /** The model declined to answer (OpenAI's `refusal`). */
  refusal?: string;
}

/**
 * One call. `quote` cuts and redacts what the provider said before it goes into a message
 * (an endpoint that echoes the key must not leave its start in an error).
 */
export type ChatCall = (
  request: ChatRequest,
  signal: AbortSignal,
  quote: (text: string) => string,
) => Promise<ChatAnswer>;

export class LlmCallError extends Error {
  readonly retryable: boolean;
  /** The HTTP status the provider answered with, when it answered. */
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    opts: { retryable: boolean; status?: number; retryAfterMs?: number | undefined },
  ) {
    super(message);
    this.name = "LlmCallError";
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** 408, 409 (provider lock contention), 429 and 5xx are worth another try; other 4xx are not. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return "the LLM endpoint";
  }
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err !== null && typeof err === "object" && "message" in err) return String(err.message);
  return String(err);
}
