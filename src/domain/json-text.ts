/**
 * The checks every JSON body and JSON query parameter goes through (strict UTF-8, depth,
 * syntax, unstorable strings, the schema), as results rather than throws: pure, so
 * that both the HTTP layer and services (signed webhooks, read before it is known which
 * schema applies) use the same ones.
 */
import type { z } from "zod";
import type { Issue } from "@/contracts/common";
import type { Result } from "./result";
import { jsonDeeperThan, jsonValueIssues, MAX_JSON_DEPTH } from "./values";

export type Refusal = { message: string; issues: Issue[] };

/**
 * Bytes the charset cannot decode are refused: a lenient decoder would store U+FFFD in
 * their place, a value the client never sent.
 */
export function decodeStrictly(
  decoder: TextDecoder,
  bytes: Uint8Array,
  /** A part of a longer text: a character cut at its end is kept for the next part. */
  stream = false,
): Result<string, Refusal> {
  try {
    return { ok: true, value: decoder.decode(bytes, { stream }) };
  } catch {
    return refused("The request body is not valid text", [
      { path: "", message: `holds bytes that are not valid ${decoder.encoding.toUpperCase()}` },
    ]);
  }
}

/** Bytes as UTF-8 text, strictly (see decodeStrictly); a leading BOM is dropped. */
export function decodeUtf8(bytes: Uint8Array): Result<string, Refusal> {
  return decodeStrictly(new TextDecoder("utf-8", { fatal: true }), bytes);
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
