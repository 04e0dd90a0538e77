/**
 * A digest of a JSON value that ignores the order of object keys (a canonical JSON: keys
 * sorted at every depth), so two equal values digest alike whichever way their fields
 * came in (JSONata's order, or Postgres jsonb's). SHA-256, base64url.
 */
import { createHash } from "node:crypto";

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

export function digestOf(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)) ?? "null")
    .digest("base64url");
}
