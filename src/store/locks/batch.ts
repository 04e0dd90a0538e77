/**
 * One statement for a batch of row-lock requests on one lock session: session advisory
 * locks taken with pg_try_advisory_lock (never waits) and released with
 * pg_advisory_unlock, each unlock also reading whether the row has queued cells. Sent on
 * the session that holds (or will hold) the locks, never on the pool.
 */
import type { SessionClient } from "@db/client";
import { coveredText } from "../sql";

export type LockRequest =
  | { key: string; op: "lock" }
  | { key: string; op: "unlock"; rowId: string };

/** Per request, in order: whether Postgres granted (lock) or found (unlock) the lock. */
export interface LockAnswer {
  ok: boolean;
  /** For an unlock: the row had a queued cell when the lock was let go. */
  more: boolean;
}

// The "more" read is a scalar subquery with a limit, which stays a per-row index probe:
// an EXISTS here was planned (generically, for ~100 keys) as a scan of every queued cell;
// its status test is claimableOnRow's (store/sql.ts): the window's index stays out, and a
// cell a large Stop's scope covers is left out (it is cancelled, nothing to carry).
const BATCH = `select x.i::int as i,
       case when x.op = 'l' then pg_try_advisory_lock(x.k) else pg_advisory_unlock(x.k) end as ok,
       x.op = 'u' and (select true from cells c where c.row_id = x.r and c.status::text = 'queued'
                                    and not ${coveredText("c")} limit 1) is not null as more
  from unnest($1::bigint[], $2::text[], $3::text[]) with ordinality as x(k, op, r, i)`;

export async function lockBatch(
  client: SessionClient,
  batch: readonly LockRequest[],
): Promise<(LockAnswer | undefined)[]> {
  const res = await client.query({
    name: "cf_row_locks",
    text: BATCH,
    values: [
      batch.map((r) => r.key),
      batch.map((r) => (r.op === "lock" ? "l" : "u")),
      batch.map((r) => (r.op === "unlock" ? r.rowId : null)),
    ],
  });
  const answers: (LockAnswer | undefined)[] = batch.map(() => undefined);
  for (const row of res.rows) {
    const i = Number(row.i) - 1;
    if (i >= 0 && i < batch.length) answers[i] = { ok: row.ok === true, more: row.more === true };
  }
  return answers;
}
