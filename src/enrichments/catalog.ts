import { listEnrichments } from "./registry";

/** Ids of the built-in enrichments a group or block may name. */
export const ENRICHMENT_IDS: ReadonlySet<string> = new Set(listEnrichments().map((e) => e.id));
