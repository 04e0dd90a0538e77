/**
 * The result cache's key for one set of inputs: a digest of the enrichment's normalized
 * inputs (`cacheInputs`) in a canonical JSON (object keys sorted), so equal inputs give
 * equal keys whatever order their fields came in.
 */
import { digestOf } from "@/domain/digest";
import type { Enrichment } from "./types";

export function cacheKeyOf<I>(enrichment: Enrichment<I>, inputs: I): string {
  return digestOf(enrichment.cacheInputs ? enrichment.cacheInputs(inputs) : inputs);
}
