/**
 * A run created under an `Idempotency-Key`. Invariant: the key's record and the dispatch
 * commit together, so a key names a run if and only if that run exists, whatever fails
 * after the commit (its stamps, its carriers, the answer). A second request with the key
 * while the first's transaction is open waits on the primary key, then gets 23505 and the
 * first's run: two requests with one key never make two runs, with no read-then-insert.
 */
import type { Db } from "@db/client";
import { isUniqueViolation } from "@db/sqlstate";
import { sql } from "drizzle-orm";
import { createDispatch, type NewDispatch } from "../dispatches/create";
import { findRunKey, RUN_KEY_HOURS, type RunKey, type SeenRunKey } from "./find";

const RUN_KEYS_PKEY = "run_keys_pkey";

export type KeyedDispatch =
  | { created: true; dispatchId: string }
  /** The key was used first: the run it started, for the caller to answer (or refuse). */
  | { created: false; seen: SeenRunKey };

export async function createKeyedDispatch(
  db: Db,
  d: NewDispatch,
  key: RunKey & { requestDigest: string },
): Promise<KeyedDispatch> {
  // A record seen and then gone (its run deleted, or pruned) frees the key: try again.
  for (let round = 1; ; round++) {
    try {
      const dispatchId = await db.transaction(async (tx) => {
        // A record past its 24 h no longer holds the key. Deleting it here (not reading
        // it) keeps two requests that both find it expired in line: the second waits
        // on the first's delete, then on its new record.
        await tx.execute(
          sql`delete from run_keys
               where table_id = ${key.tableId} and key = ${key.key}
                 and created_at <= now() - make_interval(hours => ${RUN_KEY_HOURS})`,
        );
        const id = await createDispatch(tx, d);
        await tx.execute(
          sql`insert into run_keys (table_id, key, request_digest, dispatch_id)
              values (${key.tableId}, ${key.key}, ${key.requestDigest}, ${id})`,
        );
        return id;
      });
      return { created: true, dispatchId };
    } catch (err) {
      if (round >= 3 || !isUniqueViolation(err, RUN_KEYS_PKEY)) throw err;
    }
    const seen = await findRunKey(db, key);
    if (seen) return { created: false, seen };
  }
}
