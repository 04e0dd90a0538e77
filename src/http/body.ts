import { z } from "zod";
import { RequestError } from "@/domain/errors";
import {
  decodeStrictly,
  decodeUtf8,
  parseJsonText,
  type Refusal,
  unstorableStrings,
  zodIssues,
} from "@/domain/json-text";
import type { Result } from "@/domain/result";
import { csvImportLimits } from "@/limits/csv-import";

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

/** Bodies that are plainly not a CSV file: a JSON request, or a form that wraps the file. */
const NOT_CSV = new Set([
  "application/json",
  "multipart/form-data",
  "application/x-www-form-urlencoded",
]);

/**
 * A CSV upload as text parts, decoded as they arrive (UTF-8 unless the content type names
 * another charset; a leading BOM dropped), never held whole. The content type and the
 * declared length are judged now (a RequestError); reading the parts throws one for more
 * than `csvImportLimits().bytes` bytes (413) or bytes the charset cannot decode (400).
 * Whoever stops reading early ends the upload's reading with it.
 */
export function csvBody(req: Request): AsyncIterable<string> {
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
  const limit = csvImportLimits().bytes;
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  return decodedParts(req.body, decoder, limit);
}

async function* decodedParts(
  body: ReadableStream<Uint8Array> | null,
  decoder: TextDecoder,
  limit: number,
): AsyncGenerator<string> {
  if (!body) return;
  const reader = body.getReader();
  let size = 0;
  let done = false;
  try {
    for (;;) {
      const read = await reader.read();
      if (read.done) break;
      size += read.value.byteLength;
      if (size > limit) throw tooLarge(limit);
      yield textOrThrow(decodeStrictly(decoder, read.value, true));
    }
    done = true;
    yield textOrThrow(decodeStrictly(decoder, new Uint8Array(0)));
  } finally {
    // Refused or abandoned midway: the rest of the upload is not read.
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

/** A whole CSV upload as text (csvBody's parts joined): for callers that need it all. */
export async function readCsvBody(req: Request): Promise<string> {
  let text = "";
  for await (const part of csvBody(req)) text += part;
  return text;
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

function tooLarge(limit: number): RequestError {
  return new RequestError("payload_too_large", `The request body is larger than ${limit} bytes`);
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
