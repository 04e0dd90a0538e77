/**
 * A typed client of the Cellflow HTTP API: paths, parameters, bodies and answers come from
 * the OpenAPI document (src/client/schema.ts is generated from it), so a call the API
 * would refuse for its shape does not compile. Answers are `{ data }` on success and
 * `{ error }` (the API's error shape) otherwise, with the `response` either way.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type CellflowClient = Client<paths>;

/** The document's named schemas: `Schemas["TableView"]`, `Schemas["RunView"]`… */
export type Schemas = components["schemas"];

export interface CellflowClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:3000` (paths start with `/api/`). */
  baseUrl: string;
  /** The workspace's API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  headers?: Record<string, string>;
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
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
