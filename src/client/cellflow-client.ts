/**
 * A typed client of the Cellflow HTTP API: paths, parameters, bodies and answers come from
 * the OpenAPI document (src/client/schema.ts is generated from it), so a call the API
 * would refuse for its shape does not compile. Answers are `{ data }` on success and
 * `{ error }` (the API's error shape) otherwise, with the `response` either way.
 * Structured query values (GET /rows's `where`) are sent as JSON, as the API reads them.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type CellflowClient = Client<paths>;

/** The document's named schemas: `Schemas["TableView"]`, `Schemas["RunView"]`… */
export type Schemas = components["schemas"];

export interface CellflowClientOptions {
  /**
   * The server's origin, e.g. `http://127.0.0.1:3000` (paths start with `/api/`); `""` in
   * a browser page, whose requests go to the page's own origin.
   */
  baseUrl: string;
  /** The workspace's API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** Whether cookies go along (the web UI's session is a cookie). */
  credentials?: RequestCredentials;
  /** Sends a request; the global fetch unless given (tests answer in-process). */
  fetch?: (request: Request) => Promise<Response>;
}

export function cellflowClient(opts: CellflowClientOptions): CellflowClient {
  return createClient<paths>({
    baseUrl: opts.baseUrl,
    headers: {
      ...opts.headers,
      ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
    },
    querySerializer: serializeQuery,
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/**
 * The query string of a call: scalars as text, arrays and objects as JSON (the API parses
 * `where` from JSON; openapi-fetch's own serializer refuses nested values). Absent values
 * and empty lists are left out, since the API refuses an empty `where`.
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    params.set(name, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  return params.toString();
}
