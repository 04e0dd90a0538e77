/**
 * Where orphans can be: `queued` or `running` cells that should have a live carrier: an
 * active dispatch's cells at or before its cursor (handed out), and cells of no active
 * dispatch. Cells past an active dispatch's cursor wait for the window, not for a
 * carrier. Read off the window's partial index (unfinished cells only), so a pass costs
 * the number of unfinished cells, not the table sizes.
 *
 * A queued cell is stale (its carrier should have come by now) when it waited past the
 * grace (QUEUED_GRACE_MS) both since it was stamped (`queued_at`) and, for a cell of an
 * active dispatch, since its row was handed out: a large run stamps every row at once,
 * so a row the window hands out late has an old `queued_at` the moment it is handed out,
 * while its carrier job may only be waiting for a worker slot. Hand-out times are not
 * kept per row (a write per row); the window step records its cursor's age on the
 * dispatch instead (migration 0017): every row at or before `aged_cursor`, or at or
 * before `prev_cursor` once `prev_cursor_at` is a grace old, was handed out at least a
 * grace ago. A row handed out later is not stale yet, however old its stamp.
 *
 * Staleness bound (G the grace, I the pass interval): a row whose carrier was lost after
 * its hand-out is stale within 2G of it while the run moves (the step that handed it out
 * may have come just after a record, and the first record a grace later covers it a
 * grace after that), and the next pass heals it: within about 2G + I (35 s with the
 * defaults; 80 s on trigger.dev's one-minute schedule). When nothing moves the window any
 * more (every carrier of it lost), the record is taken by the re-drive's own window step,
 * which adds up to one pass interval: at worst 2G + 2I (G + 2I when I ≥ G, as by
 * default: 40 s). A queued cell of no active dispatch is stale G after its stamp, healed
 * within G + I, as before.
 *
 * A pass reads at most `limit` candidates, and never the healthy ones: a row whose lock a
 * session holds (its live carrier's; pg_locks, as the probe reads it) is left out, so
 * however many rows are in flight, rows being carried cannot fill the read and keep an
 * orphan out of it. The rest come rows with running cells first (a lost worker's: the
 * pass hands them back, so they leave the candidates), then the oldest: by the time
 * their running cell started or their stale queued cell was stamped. More candidates than
 * the limit are healed over the next passes, the oldest first.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { QUEUED_GRACE_MS } from "../dispatches/advance";
import { coveredCell } from "../sql";
import { heldRowLocks, rowLockKeyOf } from "./orphan-probe";

export interface OrphanCandidate {
  tableId: string;
  rowId: string;
  dispatchId: string | null;
  running: { groupId: string; executionId: string; attempt: number; losses: number }[];
  /** Some queued cell was stale when the candidates were read (see the header). */
  queuedStale: boolean;
}

const grace = sql`make_interval(secs => ${QUEUED_GRACE_MS / 1000})`;

/**
 * Queued cell `c` (its active dispatch `d`, null when none) is stale: stamped a grace
 * ago and, in an active run, handed out a grace ago. With no record older than a grace
 * yet, `aged_cursor` (-1 on a new run) says nothing was handed out long enough ago.
 */
const staleQueued: SQL = sql`(c.status = 'queued' and c.queued_at < now() - ${grace}
  and not ${coveredCell("c")}
  and (d.id is null
       or c.row_position <= case when d.prev_cursor_at < now() - ${grace} then d.prev_cursor
                                 else d.aged_cursor end))`;

export async function orphanCandidates(
  db: Db,
  opts: { limit: number },
): Promise<OrphanCandidate[]> {
  return queryRows<OrphanCandidate>(
    db,
    sql`with inflight as (
          -- Off the window's partial index (queued/running cells only). A cell past an
          -- active dispatch's cursor waits for the window; any other one needs a carrier:
          -- no dispatch (auto-run, edits), or a dispatch already over (a resumed approval).
          select c.table_id, c.row_id, c.dispatch_id, c.group_id, c.execution_id, c.attempt, c.losses,
                 c.status, c.started_at, c.queued_at, ${staleQueued} as stale
            from cells c
            left join dispatches d on d.id = c.dispatch_id and d.status = 'active'
           where c.status in ('queued', 'running')
             and (d.id is null or c.row_position <= d."cursor")
        ),
        cand as (
          select table_id, row_id, min(dispatch_id) as dispatch_id,
                 coalesce(jsonb_agg(jsonb_build_object('groupId', group_id, 'executionId', execution_id,
                                                       'attempt', attempt, 'losses', losses))
                            filter (where status = 'running'), '[]'::jsonb) as running,
                 bool_or(status = 'running') as has_running,
                 bool_or(stale) as queued_stale,
                 -- What makes it a candidate, and since when: a running cell's start, a
                 -- stale queued cell's stamp (unknown times first).
                 min(case when status = 'running' then coalesce(started_at, '-infinity')
                          when stale then queued_at end) as since
            from inflight
           group by table_id, row_id
          having bool_or(status = 'running') or bool_or(stale)
        ),
        held as (${heldRowLocks})
        select table_id as "tableId", row_id as "rowId", dispatch_id as "dispatchId", running,
               queued_stale as "queuedStale"
          from cand
         where not exists (select 1 from held
                            where held.k = ${rowLockKeyOf(sql`cand.table_id`, sql`cand.row_id`)})
         order by has_running desc, since, table_id, row_id
         limit ${opts.limit}`,
  );
}

/**
 * Whether a row with only queued cells needs a carrier now: one of them is stale now
 * (read afresh, not from the candidates' snapshot, which the row's carrier may have
 * outdated by finishing the row) and no session holds the row's lock (no live carrier is
 * on it). The lock is read from pg_locks, not taken: while the pass held it, a carrier
 * that tried it would leave the row to the pass (the holder drains), which would then
 * have to carry every queued cell it found, fresh ones whose carrier is on its way too.
 * A carrier that takes the lock just after this read makes the pass's carrier a
 * duplicate, which finds the lock taken or nothing queued and leaves.
 */
export async function queuedOrphan(
  db: Db,
  row: { tableId: string; rowId: string },
): Promise<boolean> {
  const key = rowLockKeyOf(sql`${row.tableId}::text`, sql`${row.rowId}::text`);
  const [r] = await queryRows<{ orphan: boolean }>(
    db,
    sql`select exists (select 1 from cells c
                         left join dispatches d on d.id = c.dispatch_id and d.status = 'active'
                        where c.row_id = ${row.rowId} and ${staleQueued})
               and not exists (select 1 from (${heldRowLocks}) held where held.k = ${key})
               as orphan`,
  );
  return r?.orphan === true;
}

/** Active dispatches, for the window to hand out what a lost carrier never asked for. */
export async function activeDispatches(
  db: Db,
  opts: { stampingIdleMs: number },
): Promise<{ id: string; tableId: string; stampingStalled: boolean }[]> {
  return queryRows(
    db,
    sql`select id, table_id as "tableId",
               stamping and updated_at < now() - make_interval(secs => ${opts.stampingIdleMs / 1000}) as "stampingStalled"
          from dispatches where status = 'active'`,
  );
}
