/**
 * Where the CLI talks to and with which key (CELLFLOW_URL, CELLFLOW_API_KEY), and the two
 * ways it calls: the typed client for JSON routes, `request` for the event stream and CSV
 * bodies. Guarantees: every request carries the key; a refused answer becomes the API's
 * own message and issues (exit 1); a server that cannot be reached says so in one line.
 */
import { type CellflowClient, cellflowClient } from "@/client/cellflow-client";
import { type CliFailure, type CliResult, EXIT, usageError } from "./failure";

export const DEFAULT_URL = "http://127.0.0.1:3000";

export interface Connection {
  baseUrl: string;
  client: CellflowClient;
  /** A request to `path` (starting `/api/`) with the key; a network failure is a result. */
  request(path: string, init?: RequestInit): Promise<CliResult<Response>>;
}

export function connectionFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): CliResult<Connection> {
  const raw = env.CELLFLOW_URL?.trim() || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return usageError(`CELLFLOW_URL is not a URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return usageError(`CELLFLOW_URL must be an http(s) URL: ${raw}`);
  const apiKey = env.CELLFLOW_API_KEY?.trim();
  if (!apiKey)
    return usageError(
      "set CELLFLOW_API_KEY to your API key (npm start prints it when it starts and keeps it in its data folder, .data/api-key)",
    );
  const baseUrl = url.href.replace(/\/+$/, "");
  return {
    ok: true,
    value: {
      baseUrl,
      client: cellflowClient({ baseUrl, apiKey }),
      async request(path, init = {}) {
        const headers = new Headers(init.headers);
        headers.set("authorization", `Bearer ${apiKey}`);
        try {
          return { ok: true, value: await fetch(`${baseUrl}${path}`, { ...init, headers }) };
        } catch (err) {
          if (init.signal?.aborted) throw err;
          return { ok: false, reason: unreachable(baseUrl, err) };
        }
      },
    },
  };
}

export function unreachable(baseUrl: string, err: unknown): CliFailure {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    cause && typeof cause === "object" && "code" in cause && typeof cause.code === "string"
      ? cause.code
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return {
    exit: EXIT.api,
    message: `cannot reach ${baseUrl} (${code}): is the server running (npm start), and is CELLFLOW_URL right?`,
  };
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; issues?: unknown };
}

/** The API's refusal as a failure: its message, then one line per issue. */
export function refusal(status: number, body: unknown): CliFailure {
  const error = (body as ErrorBody | null)?.error;
  const message =
    typeof error?.message === "string"
      ? error.message
      : typeof body === "string" && body.trim()
        ? body.trim().split("\n")[0]
        : "the server answered without a message";
  const code = typeof error?.code === "string" ? ` ${error.code}` : "";
  const issues: unknown[] = Array.isArray(error?.issues) ? error.issues : [];
  const details = issues.map((raw) => {
    const i = (raw ?? {}) as { path?: unknown; message?: unknown };
    return typeof i.path === "string" && i.path
      ? `${i.path}: ${String(i.message)}`
      : String(i.message);
  });
  return {
    exit: EXIT.api,
    message: `${message} (HTTP ${status}${code})`,
    status,
    ...(details.length ? { details } : {}),
  };
}

/** A raw response's refusal, its body read as JSON when it is JSON. */
export async function refusalOf(res: Response): Promise<CliFailure> {
  const text = await res.text().catch(() => "");
  try {
    return refusal(res.status, JSON.parse(text));
  } catch {
    return refusal(res.status, text);
  }
}

/** A typed-client call as a result: its data, or the API's refusal, or "cannot reach". */
export async function call<D>(
  conn: Connection,
  pending: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<CliResult<D>> {
  let answer: { data?: D; error?: unknown; response: Response };
  try {
    answer = await pending;
  } catch (err) {
    return { ok: false, reason: unreachable(conn.baseUrl, err) };
  }
  if (answer.response.ok && answer.data !== undefined) return { ok: true, value: answer.data };
  return { ok: false, reason: refusal(answer.response.status, answer.error) };
}
