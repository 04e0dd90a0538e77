/**
 * The browser's way to the Cellflow API: the typed client (src/client) with the page's
 * session cookie (same-origin) and `x-cellflow-ui: 1` on every request, which the API
 * requires of cookie-authenticated writes (a cross-site page cannot send it). `answer`
 * turns a call's result into its data or throws `ApiError` with the API's code, message
 * and field issues — or, when something else answered (a proxy's page), the status.
 * A 401 sends the page back to sign-in.
 */
import { type CellflowClient, cellflowClient, type Schemas } from "@/client/cellflow-client";

export type Issue = Schemas["Issue"];

/**
 * A workflow as the API answers it. The document types an arbitrary JSON value (an http
 * block's body) as `unknown` where the contracts say JSON, so the UI reads workflows with
 * the client's type rather than the contract's.
 */
export type WorkflowAnswer = Schemas["WorkflowView"];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const UI_HEADER = { "x-cellflow-ui": "1" } as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const isIssue = (v: unknown): v is Issue =>
  isRecord(v) && typeof v.path === "string" && typeof v.message === "string";

/**
 * An error answer as `ApiError`. `body` is what came back, parsed as JSON when it was
 * JSON: the API's `{ error: { code, message, issues } }`, or anything else (an HTML
 * page, text, nothing), which only the status describes.
 */
export function toApiError(status: number, body: unknown): ApiError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : {};
  return new ApiError(
    status,
    typeof e.code === "string" ? e.code : "internal",
    typeof e.message === "string" ? e.message : `The server answered ${status}`,
    Array.isArray(e.issues) ? e.issues.filter(isIssue) : [],
  );
}

/** When the session is gone, every page goes back to sign-in. */
export function onUnauthorized(): void {
  if (typeof window !== "undefined" && !window.location.pathname.startsWith("/signin")) {
    const back = encodeURIComponent(window.location.pathname + window.location.search);
    window.location.assign(`/signin?next=${back}`);
  }
}

/** The UI's client; `baseUrl` and `fetch` are for tests outside a browser page. */
export function browserClient(
  opts: { baseUrl?: string; fetch?: (request: Request) => Promise<Response> } = {},
): CellflowClient {
  return cellflowClient({
    baseUrl: opts.baseUrl ?? "",
    headers: UI_HEADER,
    credentials: "same-origin",
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

export const api = browserClient();

/**
 * A typed call's data, or its refusal thrown as `ApiError`. Calls answered with no
 * body (204) give `undefined`.
 */
export async function answer<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await pending;
  if (response.status === 401) onUnauthorized();
  if (!response.ok) throw toApiError(response.status, error);
  // openapi-fetch leaves `data` undefined only for answers without a body.
  return data as T;
}

/** A refusal for people: its message, then each issue with where it is. */
export function describeRefusal(refusal: { message: string; issues: readonly Issue[] }): string {
  const issues = refusal.issues.map((i) => `${i.path ? `${i.path}: ` : ""}${i.message}`);
  return issues.length > 0 ? `${refusal.message} — ${issues.join("; ")}` : refusal.message;
}

/** A message for people, with field issues when the API gave some. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return describeRefusal(err);
  return err instanceof Error ? err.message : String(err);
}
