/**
 * Read-only: which of these input keys have a fresh answer now (the dry-run estimate): the
 * ones a take would serve (paid for, or its charge pending; not released).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { textArray } from "../sql";
import { paidState } from "./paid-state";

export async function freshCacheKeys(
  db: Db,
  q: { workspaceId: string; enrichmentId: string; inputKeys: readonly string[]; ttlMs: number },
): Promise<Set<string>> {
  if (q.inputKeys.length === 0) return new Set();
  const rows = await queryRows<{ inputKey: string }>(
    db,
    sql`select input_key as "inputKey" from enrichment_cache e
         where workspace_id = ${q.workspaceId} and enrichment_id = ${q.enrichmentId}
           and input_key = any(${textArray(q.inputKeys)})
           and filled_at > now() - make_interval(secs => ${q.ttlMs / 1000})
           and ${paidState(sql`e.paid_by`)} <> 'released'`,
  );
  return new Set(rows.map((r) => r.inputKey));
}
