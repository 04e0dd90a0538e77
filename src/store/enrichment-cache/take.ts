/**
 * The enrichment cache's one way in: a fresh answer, or the claim to ask the providers, or
 * word that another process holds that claim. Invariant (single flight): of the callers
 * asking for one key at once, at most one gets the claim while it is live — the insert
 * and the takeover of an expired entry or a stale claim are one statement, serialised on
 * the key; the others are told "busy" and wait for the answer. An answer is served while
 * someone is paying for it (paid-state.ts: charged, or reserved by the attempt whose
 * write will charge it); one whose charge was released (its cell stopped before its
 * write: nobody paid) is taken over like an expired one, and asked again by a caller who
 * pays for it.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellOutcome } from "@/domain/statuses";
import { paidState } from "./paid-state";

export interface CacheKey {
  workspaceId: string;
  enrichmentId: string;
  inputKey: string;
}

export type CachedOutcome = Extract<CellOutcome, "ok" | "not_found">;

export type CacheTake =
  | { kind: "hit"; outcome: CachedOutcome; outputs: Record<string, unknown>; ageMs: number }
  | { kind: "claimed" }
  | { kind: "busy" };

export async function takeCached(
  db: Db,
  key: CacheKey & {
    /** Written on the claim: only its holder fills or releases it. */
    claimId: string;
    ttlMs: number;
    /** A claim this old belongs to a process that died: taken over. */
    staleMs: number;
  },
): Promise<CacheTake> {
  const ttl = sql`make_interval(secs => ${key.ttlMs / 1000})`;
  const stale = sql`now() - make_interval(secs => ${key.staleMs / 1000})`;
  const [row] = await queryRows<{
    outcome: CachedOutcome | null;
    outputs: Record<string, unknown> | null;
    ageMs: number | null;
    claimed: number;
  }>(
    db,
    sql`with fresh as (
          select outcome, outputs,
                 (extract(epoch from now() - filled_at) * 1000)::bigint as age_ms
            from enrichment_cache e
           where workspace_id = ${key.workspaceId} and enrichment_id = ${key.enrichmentId}
             and input_key = ${key.inputKey} and filled_at > now() - ${ttl}
             and ${paidState(sql`e.paid_by`)} <> 'released'
        ),
        claimed as (
          insert into enrichment_cache (workspace_id, enrichment_id, input_key, claim_id, claimed_at)
          select ${key.workspaceId}, ${key.enrichmentId}, ${key.inputKey}, ${key.claimId}, now()
           where not exists (select 1 from fresh)
          on conflict (workspace_id, enrichment_id, input_key) do update
             set claim_id = excluded.claim_id, claimed_at = now(),
                 filled_at = null, outcome = null, outputs = null, paid_by = '[]'::jsonb
           where (enrichment_cache.filled_at is not null
                  and enrichment_cache.filled_at <= now() - ${ttl})
              or (enrichment_cache.filled_at is null
                  and enrichment_cache.claimed_at < ${stale})
              or (enrichment_cache.filled_at is not null
                  and ${paidState(sql`enrichment_cache.paid_by`)} = 'released')
          returning 1
        )
        select f.outcome, f.outputs, f.age_ms::float8 as "ageMs",
               (select count(*) from claimed)::int as claimed
          from (select 1) as one left join fresh f on true`,
  );
  if (row?.outcome && row.outputs && row.ageMs !== null)
    return { kind: "hit", outcome: row.outcome, outputs: row.outputs, ageMs: row.ageMs };
  return row?.claimed === 1 ? { kind: "claimed" } : { kind: "busy" };
}
