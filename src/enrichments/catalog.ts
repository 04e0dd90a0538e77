/** Ids of the built-in enrichments a group or block may name. */
export const ENRICHMENT_IDS: ReadonlySet<string> = new Set([
  "email_domain",
  "phone_normalize",
  "website_meta",
  "company_lookup",
]);
