import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** How long a run request's `Idempotency-Key` is honoured (API.md: kept 24 h). */
export const RUN_KEY_HOURS = 24;

/** An `Idempotency-Key` of a table, as a run request sends it. */
export interface RunKey {
  tableId: string;
  key: string;
}

/** A key already used: the run it started (as that run stands now) and its request's digest. */
export interface SeenRunKey {
  dispatchId: string;
  requestDigest: string;
  stamped: number;
  stamping: boolean;
}

/** The run a key started, while the key is honoured; null for a key not (or no longer) known. */
export async function findRunKey(db: Db, k: RunKey): Promise<SeenRunKey | null> {
  const [seen] = await queryRows<SeenRunKey>(
    db,
    sql`select k.dispatch_id as "dispatchId", k.request_digest as "requestDigest",
               d.stamped, d.stamping
          from run_keys k join dispatches d on d.id = k.dispatch_id
         where k.table_id = ${k.tableId} and k.key = ${k.key}
           and k.created_at > now() - make_interval(hours => ${RUN_KEY_HOURS})`,
  );
  return seen ?? null;
}
