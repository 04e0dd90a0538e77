/**
 * For what a typed client cannot send: raw bodies, bodies of the wrong shape, odd headers,
 * unknown routes and methods. Only the hostile-input and authorization suites (and the few
 * files listed in .dependency-cruiser.cjs, rule "raw-api-only-for-hostile-requests") use
 * it; every other test calls the API through `apiClient` (./api), whose types follow the
 * OpenAPI document. Answers still pass through the in-process transport, so they are
 * checked against the document all the same.
 */
import { inProcessFetch } from "./api";

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** Sends `method url` as given; a JSON `body` is serialized, a `rawBody` sent as is. */
export async function call<T = unknown>(
  method: string,
  url: string,
  opts: CallOptions = {},
): Promise<ApiResponse<T>> {
  const parsed = new URL(url, "http://cellflow.test");
  const headers = new Headers(opts.headers);
  if (opts.key) headers.set("authorization", `Bearer ${opts.key}`);
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers.set("content-type", "application/json");
  }
  const res = await inProcessFetch(new Request(parsed, { method, headers, body }));
  if (res.status === 405) return { status: 405, body: null as T, headers: new Headers() };
  const text = await res.text();
  let parsedBody: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json") && text)
    parsedBody = JSON.parse(text);
  return { status: res.status, body: parsedBody as T, headers: res.headers };
}
