import { z } from "zod";
import type { Issue } from "../contracts/common";
import { RequestError } from "../domain/errors";
import type { Result } from "../domain/result";
import { jsonDeeperThan, jsonValueIssues, MAX_JSON_DEPTH } from "../domain/values";

export const MAX_JSON_BODY = 1024 * 1024;

/**
 * Reads at most `limit` bytes, exactly as sent (signatures are checked over these bytes);
 * a larger body is refused without reading the rest.
 */
export async function readBodyBytes(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export const MAX_CSV_BODY = 50 * 1024 * 1024;

/** Bodies that are plainly not a CSV file: a JSON request, or a form that wraps the file. */
const NOT_CSV = new Set([
  "application/json",
  "multipart/form-data",
  "application/x-www-form-urlencoded",
]);

/**
 * A CSV upload (at most 50 MiB) as text. Decoded as UTF-8 unless the content type names
 * another charset; a leading BOM is dropped.
 */
export async function readCsvBody(req: Request): Promise<string> {
  const [type = "", ...params] = (req.headers.get("content-type") ?? "").split(";");
  if (NOT_CSV.has(type.trim().toLowerCase()))
    throw new RequestError("validation_failed", "Send the CSV file itself as the body", [
      { path: "content-type", message: "must be text/csv" },
    ]);
  const charset = params
    .map((p) => p.trim().split("="))
    .find(([k]) => k?.toLowerCase() === "charset")?.[1]
    ?.replace(/^"|"$/g, "");
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8", { fatal: true });
  } catch {
    throw new RequestError("validation_failed", "Unknown charset", [
      { path: "content-type", message: `charset ${JSON.stringify(charset)} is not supported` },
    ]);
  }
  return textOrThrow(decodeStrictly(decoder, await readBodyBytes(req, MAX_CSV_BODY)));
}

type Refusal = { message: string; issues: Issue[] };

/**
 * Bytes the charset cannot decode are refused: a lenient decoder would store U+FFFD in
 * their place, a value the client never sent.
 */
function decodeStrictly(decoder: TextDecoder, bytes: Uint8Array): Result<string, Refusal> {
  try {
    return { ok: true, value: decoder.decode(bytes) };
  } catch {
    return refused("The request body is not valid text", [
      { path: "", message: `holds bytes that are not valid ${decoder.encoding.toUpperCase()}` },
    ]);
  }
}

function textOrThrow(decoded: Result<string, Refusal>): string {
  if (!decoded.ok)
    throw new RequestError("validation_failed", decoded.reason.message, decoded.reason.issues);
  return decoded.value;
}

/** Reads at most `limit` bytes as UTF-8 text; invalid UTF-8 is a 400. */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  return textOrThrow(decodeUtf8(await readBodyBytes(req, limit)));
}

/** Bytes as UTF-8 text, strictly (see decodeStrictly); a leading BOM is dropped. */
export function decodeUtf8(bytes: Uint8Array): Result<string, Refusal> {
  return decodeStrictly(new TextDecoder("utf-8", { fatal: true }), bytes);
}

function tooLarge(limit: number): RequestError {
  return new RequestError("payload_too_large", `The request body is larger than ${limit} bytes`);
}

/**
 * Strings Postgres cannot store (NUL, unpaired surrogates) and `__proto__` keys (which
 * zod and object spreads drop) are refused here, as a 400, instead of failing later as a
 * database error or vanishing silently.
 */
export function unstorableStrings(value: unknown, path = ""): Issue[] {
  return jsonValueIssues(value, path);
}

export function zodIssues(error: z.ZodError): Issue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}

export interface BodyOptions {
  limit?: number;
  /** The value an empty body stands for; without it an empty body is refused. */
  empty?: unknown;
}

export async function parseJsonBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  opts: BodyOptions = {},
): Promise<z.infer<S>> {
  const text = await readBodyText(req, opts.limit ?? MAX_JSON_BODY);
  const parsed = parseJsonText(text, schema, opts.empty);
  if (!parsed.ok)
    throw new RequestError("validation_failed", parsed.reason.message, parsed.reason.issues);
  return parsed.value;
}

/**
 * The checks of `parseJsonBody` on a body already read (bytes are decoded as strict UTF-8),
 * as a result rather than a throw: for bodies read before it is known which schema
 * applies (signed webhooks).
 */
export function parseJsonText<S extends z.ZodType>(
  body: string | Uint8Array,
  schema: S,
  empty?: unknown,
): Result<z.infer<S>, Refusal> {
  const decoded = typeof body === "string" ? { ok: true as const, value: body } : decodeUtf8(body);
  if (!decoded.ok) return decoded;
  const text = decoded.value;
  // Checked on the text, before anything recursive (zod, the walk below) sees the value.
  if (jsonDeeperThan(text, MAX_JSON_DEPTH))
    return refused("The request body is nested too deeply", [
      {
        path: "",
        message: `JSON may nest arrays and objects at most ${MAX_JSON_DEPTH} levels deep`,
      },
    ]);
  let value: unknown;
  try {
    value = text.trim() === "" ? empty : JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : "";
    return refused("The request body is not valid JSON", [{ path: "", message: detail }]);
  }
  if (value === undefined)
    return refused("The request needs a JSON body", [{ path: "", message: "empty body" }]);
  const unstorable = unstorableStrings(value);
  if (unstorable.length > 0)
    return refused("The request holds text or keys that cannot be stored", unstorable);
  const parsed = schema.safeParse(value);
  if (!parsed.success) return refused("The request is not valid", zodIssues(parsed.error));
  return { ok: true, value: parsed.data };
}

function refused(message: string, issues: Issue[]): { ok: false; reason: Refusal } {
  return { ok: false, reason: { message, issues } };
}

/**
 * Query parameters as an object; repeated keys keep the last value. The parameters named
 * in `jsonParams` hold JSON text: each goes through the checks of a JSON body (depth,
 * syntax, unstorable strings) before the schema sees its value.
 */
export function parseQuery<S extends z.ZodType>(
  req: Request,
  schema: S,
  jsonParams: readonly string[] = [],
): z.infer<S> {
  const params: Record<string, unknown> = Object.fromEntries(new URL(req.url).searchParams);
  const unstorable = unstorableStrings(params);
  if (unstorable.length > 0)
    throw new RequestError(
      "validation_failed",
      "The query holds text that cannot be used",
      unstorable,
    );
  for (const name of jsonParams) {
    const text = params[name];
    if (typeof text !== "string") continue;
    if (text === "") {
      // An empty parameter is an absent one, as for a cursor.
      delete params[name];
      continue;
    }
    const value = parseJsonText(text, z.unknown());
    if (!value.ok)
      throw new RequestError(
        "validation_failed",
        `The query parameter ${name} is not valid JSON`,
        value.reason.issues.map((i) => ({ ...i, path: i.path ? `${name}.${i.path}` : name })),
      );
    params[name] = value.value;
  }
  const parsed = schema.safeParse(params);
  if (!parsed.success)
    throw new RequestError("validation_failed", "The query is not valid", zodIssues(parsed.error));
  return parsed.data;
}
