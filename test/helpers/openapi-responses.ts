/**
 * Checks an answer of the API against the OpenAPI document (src/http/openapi): the status
 * must be one the document lists for the operation, the content type the one it names,
 * and a JSON body must match its schema (JSON Schema 2020-12, the dialect of OpenAPI
 * 3.1). The integration helper runs this on every answer, so the whole suite holds the
 * document to what the server really says.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { openApiDocument } from "@/http/openapi/document";

const DOC_ID = "cellflow-openapi";

/** The route file's folder path (`/api/tables/[id]`) in the document's form (`{id}`). */
export function documentPath(template: string): string {
  return template.replace(/\[([A-Za-z0-9_]+)\]/g, "{$1}");
}

const pointer = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

let ajv: Ajv2020 | null = null;

function validator(path: string, method: string, status: string): ValidateFunction {
  if (!ajv) {
    // Not strict: the document's own keys (paths, info…) are not schema keywords, and
    // formats are documentation here (the contracts check what they must).
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(openApiDocument() as object, DOC_ID);
  }
  const ref = `${DOC_ID}#/paths/${pointer(path)}/${method}/responses/${status}/content/${pointer("application/json")}/schema`;
  const fn = ajv.getSchema(ref);
  if (!fn) throw new Error(`no schema at ${ref}`);
  return fn;
}

type Media = Record<string, unknown>;

function documentedContent(path: string, method: string, status: number): Media | null | "none" {
  const item = openApiDocument().paths?.[path] as Record<string, unknown> | undefined;
  const op = item?.[method] as { responses?: Record<string, { content?: Media }> } | undefined;
  if (!op) return "none";
  const res = op.responses?.[String(status)];
  if (!res) return null;
  return res.content ?? {};
}

export interface Answer {
  method: string;
  /** The route file's folder path, e.g. `/api/tables/[id]/rows`. */
  template: string;
  /** The path the request was sent to, for the message. */
  url: string;
  status: number;
  contentType: string | null;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: unknown;
  text: string;
}

/** Why the answer does not match the document, or null when it does. */
export function answerMismatch(a: Answer): string | null {
  const method = a.method.toLowerCase();
  const path = documentPath(a.template);
  const where = `${a.method} ${a.url} answered ${a.status}`;
  const content = documentedContent(path, method, a.status);
  if (content === "none") return `${where}, but the OpenAPI document has no ${a.method} ${path}`;
  if (content === null) {
    const body = a.text.slice(0, 300);
    return `${where}, a status the OpenAPI document does not list for ${a.method} ${path} (body: ${body})`;
  }
  const types = Object.keys(content);
  if (types.length === 0)
    return a.text === "" ? null : `${where} with a body, but the document says it has none`;
  const sent = (a.contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!types.includes(sent))
    return `${where} as "${a.contentType}", but the document names ${types.join(", ")}`;
  if (sent !== "application/json") return null;
  const validate = validator(path, method, String(a.status));
  if (validate(a.body)) return null;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || "(body)"} ${e.message ?? ""}`)
    .join("; ");
  return `${where}: the body does not match the OpenAPI document's schema: ${errors} (body: ${a.text.slice(0, 500)})`;
}

/** Throws (failing the test) when the answer does not match the document. */
export function expectDocumentedAnswer(a: Answer): void {
  const mismatch = answerMismatch(a);
  if (mismatch) throw new Error(mismatch);
}
