/**
 * The built-in enrichments by id. Invariant: this list is the only source of enrichment
 * ids (the catalog that table schemas are checked against is derived from it), and the
 * order here is the order `GET /api/enrichments` lists them in. A harness (the benchmark's
 * loopback providers) may add enrichments to its own process: the engine finds them by
 * id, but the catalog and the API never list them, so no table can name one through it.
 */
import { companyLookupEnrichment } from "./company-lookup";
import { emailDomainEnrichment } from "./email-domain";
import { phoneNormalizeEnrichment } from "./phone-normalize";
import type { Enrichment } from "./types";
import { websiteMetaEnrichment } from "./website-meta";

const BUILT_INS: readonly Enrichment[] = [
  emailDomainEnrichment,
  phoneNormalizeEnrichment,
  websiteMetaEnrichment,
  companyLookupEnrichment,
];

const BY_ID = new Map(BUILT_INS.map((e) => [e.id, e]));

const ADDED = new Map<string, Enrichment>();

export function getEnrichment(id: string): Enrichment | undefined {
  return BY_ID.get(id) ?? ADDED.get(id);
}

/** Adds a harness's enrichment to this process (see the header); a built-in id is refused. */
export function addHarnessEnrichment(enrichment: Enrichment): void {
  if (BY_ID.has(enrichment.id)) throw new Error(`"${enrichment.id}" is a built-in enrichment`);
  ADDED.set(enrichment.id, enrichment);
}

export function listEnrichments(): readonly Enrichment[] {
  return BUILT_INS;
}
