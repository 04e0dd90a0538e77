/**
 * One API operation as the document describes it, and how it becomes an OpenAPI path
 * item. Guarantees: every operation lists its success answer and, in the API's error
 * shape, every error status the route can answer: 500 always (the handler's guard), 401
 * where a key is checked, 404 where the path carries ids (an impossible id is a 404
 * before any lookup), 400 and 413 where a body or query is read; `errors` adds the
 * statuses only the service knows (a conflict, a refused token).
 */
import type { OpenAPIRegistry, ResponseConfig } from "@asteasolutions/zod-to-openapi";
import { type ZodObject, type ZodType, z } from "zod";
import { ApiError } from "@/contracts/common";
import { PATH_ID } from "../path-ids";

/**
 * Who may call: `key` an API key (or the web UI's session cookie), `public` nobody in
 * particular, `admin` the admin token, `metrics` the metrics token (or the admin token),
 * `signed` a webhook signature.
 */
export type Access = "key" | "public" | "admin" | "metrics" | "signed";

export type Method = "get" | "post" | "put" | "patch" | "delete";

export type ErrorStatus = 400 | 401 | 402 | 404 | 409 | 413 | 500;

/** A success answer: JSON of a schema, a text media type, or no body. */
export type Answer =
  | { status: number; description: string; json: ZodType; headers?: Record<string, string> }
  | {
      status: number;
      description: string;
      text: "text/csv" | "text/event-stream" | "text/html" | "text/plain";
      /** A stream's items: a component each `data:` frame (with its `event:`) fits. */
      items?: string;
    }
  | { status: 204; description: string; headers?: Record<string, string> };

export interface Operation {
  method: Method;
  /** OpenAPI form: `/api/tables/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  /** Names of the path's ids; each is described as a path id. */
  params?: Record<string, string>;
  query?: ZodObject;
  headers?: ZodObject;
  body?: { json: ZodType; optional?: boolean } | { csv: true };
  answers: Answer[];
  /** Error statuses beyond the ones the route's shape implies (see the header). */
  errors?: ErrorStatus[];
}

const ERROR_TEXT: Record<ErrorStatus, string> = {
  400: "The request is not valid; `issues` say where",
  401: "The credentials are missing or not valid",
  402: "A limit of the workspace's plan is reached (`limit_reached`); `message` names it",
  404: "Not found (or not visible to this key)",
  409: "Conflicts with the current state; retry or refetch",
  413: "The request body is too large",
  500: "Something went wrong on the server; the request was not completed",
};

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  key: [{ apiKey: [] }, { session: [] }],
  public: [],
  admin: [{ adminToken: [] }],
  metrics: [{ metricsToken: [] }, { adminToken: [] }],
  signed: [{ signature: [] }],
};

/** The statuses the operation's shape implies, plus its own. */
export function errorStatuses(op: Operation): ErrorStatus[] {
  const out = new Set<ErrorStatus>(op.errors ?? []);
  out.add(500);
  if (op.access === "key") out.add(401);
  if (op.params) out.add(404);
  if (op.body) {
    out.add(400);
    out.add(413);
  }
  if (op.query) out.add(400);
  return [...out].sort((a, b) => a - b);
}

function answer(a: Answer): ResponseConfig {
  const headers = "headers" in a && a.headers ? headerObjects(a.headers) : undefined;
  if ("json" in a)
    return {
      description: a.description,
      ...(headers ? { headers } : {}),
      content: { "application/json": { schema: a.json } },
    };
  if ("text" in a)
    return {
      description: a.description,
      content: {
        [a.text]: {
          schema: { type: "string" },
          // OpenAPI 3.2 names a stream's item schema `itemSchema`; 3.1 allows it as an extension.
          ...(a.items ? { "x-itemSchema": { $ref: `#/components/schemas/${a.items}` } } : {}),
        },
      },
    };
  return { description: a.description, ...(headers ? { headers } : {}) };
}

function headerObjects(headers: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [
      name,
      { description, schema: { type: "string" as const } },
    ]),
  );
}

function pathParams(names: Record<string, string>): ZodObject {
  return z.object(
    Object.fromEntries(
      Object.entries(names).map(([name, description]) => [
        name,
        z.string().regex(PATH_ID).describe(description),
      ]),
    ),
  );
}

function requestBody(body: NonNullable<Operation["body"]>) {
  if ("csv" in body)
    return {
      required: true,
      description:
        "The CSV file itself (header row = column names), at most 500 MiB and 1,000,000 rows, read as it arrives",
      content: { "text/csv": { schema: { type: "string" as const } } },
    };
  return {
    required: !body.optional,
    content: { "application/json": { schema: body.json } },
  };
}

export function registerOperation(registry: OpenAPIRegistry, op: Operation): void {
  const responses: Record<string, ResponseConfig> = {};
  for (const a of op.answers) responses[String(a.status)] = answer(a);
  for (const status of errorStatuses(op)) {
    responses[String(status)] ??= {
      description: ERROR_TEXT[status],
      content: { "application/json": { schema: ApiError } },
    };
  }
  registry.registerPath({
    method: op.method,
    path: op.path,
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: SECURITY[op.access],
    request: {
      ...(op.params ? { params: pathParams(op.params) } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(op.headers ? { headers: op.headers } : {}),
      ...(op.body ? { body: requestBody(op.body) } : {}),
    },
    responses,
  });
}
