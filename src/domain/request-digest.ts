/**
 * A digest of a parsed request: SHA-256 of its canonical JSON (object keys sorted, absent
 * fields left out), so two requests that parse to the same value get the same digest
 * whatever their field order or spacing, and any difference of value changes it.
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

export function requestDigest(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)) ?? "null")
    .digest("hex");
}
