import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { cellOutcome } from "./enums";
import { workspaces } from "./workspaces";

/**
 * Paid enrichments' answers per workspace, by enrichment and normalized inputs
 * (`input_key`, a digest), for CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS. An entry is either
 * filled (`filled_at`: the outcome and outputs of the call that answered) or claimed (`claim_id`, `claimed_at`): one process is asking the providers and
 * the others wait for its answer instead of paying for the same one (single flight). A
 * claim older than its staleness bound belongs to a process that died and is taken over;
 * a claim whose call failed is deleted (errors are never cached). A filled answer that was
 * charged for names its charge keys (`paid_by`): it is served while they are charged or
 * still reserved, and asked again once they were released (a Stop after the answer, so
 * nobody paid for it).
 */
export const enrichmentCache = pgTable(
  "enrichment_cache",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    enrichmentId: text("enrichment_id").notNull(),
    inputKey: text("input_key").notNull(),
    outcome: cellOutcome("outcome"),
    outputs: jsonb("outputs"),
    filledAt: timestamp("filled_at", { withTimezone: true }),
    claimId: text("claim_id"),
    claimedAt: timestamp("claimed_at", { withTimezone: true }),
    /** The charge keys (`[{ chargeId, source }]`) the answer is paid by; empty: free. */
    paidBy: jsonb("paid_by").notNull().default(sql`'[]'::jsonb`),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.enrichmentId, t.inputKey] }),
    index("enrichment_cache_filled_idx").on(t.filledAt),
  ],
);
