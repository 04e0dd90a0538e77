/**
 * The result cache's key for one set of inputs: a digest of the enrichment's normalized
 * inputs (`cacheInputs`) in a canonical JSON (object keys sorted), so equal inputs give
 * equal keys whatever order their fields came in.
 */
import { createHash } from "node:crypto";
import type { Enrichment } from "./types";

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

export function cacheKeyOf<I>(enrichment: Enrichment<I>, inputs: I): string {
  const normalized = enrichment.cacheInputs ? enrichment.cacheInputs(inputs) : inputs;
  return createHash("sha256")
    .update(JSON.stringify(canonical(normalized)) ?? "null")
    .digest("base64url");
}
