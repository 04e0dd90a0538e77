/**
 * The drainer of the destinations' marks (appended by the cell-end trigger, migration
 * `destination_marks_trigger`): a row whose marks it takes and that has no queued, running
 * or paused cell gets one delivery per enabled destination of its table, its body the row
 * as it is now; the marks are deleted in the same statement. Marks of a row whose carrier
 * holds the row lock are neither taken nor judged: its cascade is not done (an auto-run
 * group may be stamped after the end that marked it), so a pass after the carrier lets go
 * sends the row, complete.
 *
 * Invariant: every finished row is sent. A mark commits with the cell end that made it,
 * and the marks taken and the cells judged are read in one snapshot: if a concurrent end
 * of another cell of the row is not visible (so that cell still looks active and the row
 * is not sent), its mark is not visible either, and a later pass takes it and sends the
 * row. One drainer at a time (an advisory lock; the others skip their turn), and a pass
 * takes every mark of the rows it chooses, so two passes never send the same finish
 * twice; a row's deliveries to a destination are numbered (`seq`) in the order they are
 * made.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { heldRowLocks, rowLockKeyOf } from "../cells/orphan-probe";
import { rowSelect } from "../rows/read";
import { coveredCell } from "../sql";

/** Arbitrary constant: one drainer at a time across processes. */
export const DRAIN_LOCK_KEY = 7_461_113_031;
/** Marks that choose a pass's rows. */
export const DRAIN_BATCH = 2_000;

export interface DrainResult {
  /** Marks that chose the pass's rows: fewer than the batch means none was left over. */
  marks: number;
  /** Deliveries added to the outbox. */
  deliveries: number;
}

/** Null: another drainer holds the lock (this turn is skipped). */
export async function drainDestinationMarks(
  db: Db,
  now: Date,
  batch = DRAIN_BATCH,
): Promise<DrainResult | null> {
  // An idle turn (no mark anywhere: every worker asks twice a second) is one probe: no
  // transaction, no drain lock, and no read of pg_locks, which takes every lock-manager
  // partition for a moment while carriers are taking and releasing row locks.
  const [marked] = await queryRows<{ any: boolean }>(
    db,
    sql`select exists (select 1 from destination_marks) as any`,
  );
  if (!marked?.any) return { marks: 0, deliveries: 0 };
  return db.transaction(async (tx) => {
    const [lock] = await queryRows<{ got: boolean }>(
      tx,
      sql`select pg_try_advisory_xact_lock(${DRAIN_LOCK_KEY}) as got`,
    );
    if (!lock?.got) return null;
    const [r] = await queryRows<DrainResult>(
      tx,
      // Whole rows per pass: the oldest marks choose the rows, and every mark of those rows
      // goes, so a row's marks split by the cut are never sent in two passes.
      // Marks of a row whose carrier holds its lock stay for a later pass: the cascade may
      // stamp an auto-run group after the cell end that made them (engine/cascade.ts), so
      // the row is sent once the carrier lets go, complete. The lock is looked up, not
      // taken: a drain never waits on nor delays a carrier.
      sql`with held as materialized (${heldRowLocks}),
          chosen as (
            select m.id, m.row_id from destination_marks m
             where ${rowLockKeyOf(sql`m.table_id`, sql`m.row_id`)} not in (select k from held)
             order by m.id limit ${batch}
          ),
          taken as (
            delete from destination_marks
             where row_id in (select row_id from chosen)
            returning id, table_id, row_id, dispatch_id
          ),
          latest as (
            select distinct on (row_id) row_id, table_id, dispatch_id
              from taken order by row_id, id desc
          ),
          finished as (
            select l.row_id, l.table_id, l.dispatch_id from latest l
             where not exists (select 1 from cells c
                                where c.row_id = l.row_id
                                  and c.status in ('queued', 'running', 'paused')
                                  and not (c.status = 'queued' and ${coveredCell("c")}))
          ),
          bodies as (
            select f.table_id, f.row_id,
                   jsonb_build_object('tableId', f.table_id, 'rowId', f.row_id,
                                      'data', x.data, 'cells', x.cells,
                                      'dispatchId', f.dispatch_id) as body
              from finished f
              cross join lateral (select ${rowSelect} from rows r
                                   where r.id = f.row_id and r.table_id = f.table_id) x
          ),
          added as (
            insert into destination_deliveries
              (id, destination_id, row_id, seq, body, status, next_attempt_at, created_at)
            select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), d.id, b.row_id,
                   coalesce((select max(e.seq) from destination_deliveries e
                              where e.destination_id = d.id and e.row_id = b.row_id), 0) + 1,
                   b.body, 'pending', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
              from bodies b
              join destinations d on d.table_id = b.table_id and d.enabled
            returning 1
          )
          select (select count(*)::int from chosen) as marks,
                 (select count(*)::int from added) as deliveries`,
    );
    return r ?? { marks: 0, deliveries: 0 };
  });
}
