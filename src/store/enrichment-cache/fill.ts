/**
 * A claim's life after `takeCached`: kept live, filled with the answer, or given up.
 * Invariant: only the claim's holder touches, fills or releases its entry — a claim taken over (its holder was slow past the staleness bound) is "lost"
 * and the entry is left to the new holder.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import type { CachedOutcome, CacheKey } from "./take";

export async function fillCached(
  db: Db,
  entry: CacheKey & {
    claimId: string;
    outcome: CachedOutcome;
    outputs: Record<string, unknown>;
    /** The charge keys whose charge pays for this answer (none: free); see paid-state.ts. */
    paidBy?: readonly ChargeKey[];
  },
): Promise<"filled" | "lost"> {
  const paidBy = (entry.paidBy ?? []).map(({ chargeId, source }) => ({ chargeId, source }));
  const rows = await queryRows<{ one: number }>(
    db,
    sql`update enrichment_cache
           set outcome = ${entry.outcome}, outputs = ${JSON.stringify(entry.outputs)}::jsonb,
               filled_at = now(), claim_id = null, claimed_at = null,
               paid_by = ${JSON.stringify(paidBy)}::jsonb
         where workspace_id = ${entry.workspaceId} and enrichment_id = ${entry.enrichmentId}
           and input_key = ${entry.inputKey} and claim_id = ${entry.claimId}
        returning 1 as one`,
  );
  return rows.length === 1 ? "filled" : "lost";
}

/** Gives up a claim whose call did not answer (errors are never cached): the next caller claims. */
export async function releaseCached(db: Db, entry: CacheKey & { claimId: string }): Promise<void> {
  await queryRows(
    db,
    sql`delete from enrichment_cache
         where workspace_id = ${entry.workspaceId} and enrichment_id = ${entry.enrichmentId}
           and input_key = ${entry.inputKey} and claim_id = ${entry.claimId}
           and filled_at is null`,
  );
}

/** Keeps a claim live while its holder works (its call may wait long in the rate limit's line). */
export async function touchCached(
  db: Db,
  entry: CacheKey & { claimId: string },
): Promise<"held" | "lost"> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`update enrichment_cache set claimed_at = now()
         where workspace_id = ${entry.workspaceId} and enrichment_id = ${entry.enrichmentId}
           and input_key = ${entry.inputKey} and claim_id = ${entry.claimId}
        returning 1 as one`,
  );
  return rows.length === 1 ? "held" : "lost";
}
