/**
 * The built-in enrichments by id. Invariant: this list is the only source of enrichment
 * ids (the catalog that table schemas are checked against is derived from it), and the
 * order here is the order `GET /api/enrichments` lists them in.
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

export function getEnrichment(id: string): Enrichment | undefined {
  return BY_ID.get(id);
}

export function listEnrichments(): readonly Enrichment[] {
  return BUILT_INS;
}
