/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod contracts the routes
 * validate with (src/contracts) and the operation lists beside this file. Built once per
 * process; the same input always gives the same document (it is committed as
 * docs/openapi.json and a test compares the two).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { TableEvent } from "@/contracts/events";
import { describeAnswers } from "./answers";
import { nameComponents } from "./components";
import { DESTINATION_OPERATIONS } from "./destination-routes";
import { type Operation, registerOperation } from "./operation";
import { TABLE_OPERATIONS } from "./table-routes";
import { WORKSPACE_OPERATIONS } from "./workspace-routes";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/** Every operation the document describes, in the order it lists them. */
export const OPERATIONS: readonly Operation[] = [
  ...WORKSPACE_OPERATIONS,
  ...TABLE_OPERATIONS,
  ...DESTINATION_OPERATIONS,
];

const DESCRIPTION = `Tables whose columns are filled by per-row background work.

Every \`/api/**\` route needs \`Authorization: Bearer <api key>\` (or the web UI's session cookie) unless its operation says otherwise. A key sees only its workspace: another workspace's ids answer 404, never 403. Errors are \`{ "error": { "code", "message", "issues"? } }\`; bad input is a 400 with \`issues\`, never a 500. Request bodies are at most 1 MiB (a CSV import 500 MiB).`;

function build(): OpenApiDocument {
  nameComponents();
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "The workspace's API key: `Authorization: Bearer <key>`",
  });
  registry.registerComponent("securitySchemes", "session", {
    type: "apiKey",
    in: "cookie",
    name: "cellflow_session",
    description:
      "The web UI's session cookie (set by `POST /api/session`); requests that change something must also send `x-cellflow-ui: 1`. Used only when no `Authorization` header is sent.",
  });
  registry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The server's `CELLFLOW_ADMIN_TOKEN`",
  });
  registry.registerComponent("securitySchemes", "metricsToken", {
    type: "http",
    scheme: "bearer",
    description:
      "The server's `CELLFLOW_METRICS_TOKEN` (`GET /api/metrics`); when it is unset, the admin token",
  });
  registry.registerComponent("securitySchemes", "signature", {
    type: "apiKey",
    in: "header",
    name: "Cellflow-Signature",
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>',
  });
  for (const op of OPERATIONS) registerOperation(registry, op);
  const doc = new OpenApiGeneratorV31([
    ...registry.definitions,
    // Named only by the event stream's `x-itemSchema`, which the generator does not follow.
    { type: "schema", schema: TableEvent },
  ]).generateDocument({
    openapi: "3.1.0",
    info: { title: "Cellflow API", version: "1", description: DESCRIPTION },
    tags: [...new Set(OPERATIONS.map((op) => op.tag))].map((name) => ({ name })),
  });
  const schemas = doc.components?.schemas;
  if (schemas) schemas.JsonValue = jsonValueSchema();
  jsonQueryParameters(doc);
  describeAnswers(doc);
  return doc;
}

/**
 * A structured query value (GET /rows's `where`) is sent as URL-encoded JSON, one
 * parameter, not as the form style's repeated keys: OpenAPI says so with `content`
 * instead of `schema` on the parameter.
 */
function jsonQueryParameters(doc: OpenApiDocument): void {
  for (const item of Object.values(doc.paths ?? {}))
    for (const op of [item.get, item.post, item.put, item.patch, item.delete]) {
      for (const param of op?.parameters ?? []) {
        if (!("in" in param) || param.in !== "query" || !param.schema) continue;
        const schema = param.schema;
        const structured = "$ref" in schema || schema.type === "array" || schema.type === "object";
        if (!structured) continue;
        delete param.schema;
        param.content = { "application/json": { schema } };
        param.description ??= "JSON, URL-encoded";
      }
    }
}

type SchemaEntry = NonNullable<NonNullable<OpenApiDocument["components"]>["schemas"]>[string];

/**
 * `JsonValue` by hand, as the schema that accepts any value: the generator marks the
 * recursive schema's references to itself nullable with a `oneOf` whose branches both
 * accept null (refusing every null inside an array or object), and a recursive union is
 * a type TypeScript cannot declare in a generated client. Any parsed JSON is JSON.
 */
function jsonValueSchema(): SchemaEntry {
  return { description: "Any JSON value" };
}

let built: OpenApiDocument | null = null;

/** The document; callers must not change it (it is shared). */
export function openApiDocument(): OpenApiDocument {
  built ??= build();
  return built;
}
