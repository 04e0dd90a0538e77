/**
 * The fold: moves the counters' deltas (appended by the statement triggers on `cells` and
 * `rows`, migration `progress_counter_triggers`) into the base tables, and sends the
 * `progress` event of each table whose counts it changed, at most once a second per table.
 *
 * Invariant: every delta is added to the base exactly once. The deltas a fold takes are
 * deleted by the statement that adds them to the base, in one transaction, so a read
 * (base + deltas, one snapshot) sees them on one side only; a second fold at the same
 * moment skips (an advisory lock), and even without it could not take the same deltas
 * (`for update skip locked`). Nothing a carrier writes is locked here: carriers only
 * append deltas, so no transition waits on a count.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { EVENTS_CHANNEL } from "@/events/hub";
import { appendEvent } from "../events/append";
import { notify } from "../notify/publish";
import { readProgress } from "./read";

/** Arbitrary constant: one fold at a time across processes; the others skip their turn. */
const FOLD_LOCK_KEY = 7_461_113_030;
/** Deltas per fold; a run's worth of a second is far fewer. */
const BATCH = 50_000;

export interface FoldResult {
  /** Deltas moved into the base (or dropped: their table is gone). */
  deltas: number;
  /** `progress` events sent. */
  events: number;
}

/** Null: another fold holds the lock (this turn is skipped). */
export async function foldCounts(db: Db): Promise<FoldResult | null> {
  return db.transaction(async (tx) => {
    const [lock] = await queryRows<{ got: boolean }>(
      tx,
      sql`select pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) as got`,
    );
    if (!lock?.got) return null;
    // The tables first, as a table's delete takes them (its row, then the cascade into
    // the counts): a delete waits for this fold instead of closing a cycle with it, and
    // the base is written only for tables that still exist.
    const live = await queryRows<{ id: string }>(
      tx,
      sql`select id from tables
           where id in (select distinct table_id from cell_count_deltas)
           order by id for key share`,
    );
    const liveIds = JSON.stringify(live.map((t) => t.id));
    const [folded] = await queryRows<{ deltas: number }>(
      tx,
      sql`with live as (select jsonb_array_elements_text(${liveIds}::jsonb) as id),
          taken as (
            select x.ctid from cell_count_deltas x
             where x.table_id in (select id from live)
                or not exists (select 1 from tables t where t.id = x.table_id)
             limit ${BATCH}
             for update skip locked
          ),
          d as (
            delete from cell_count_deltas x where x.ctid = any(array(select ctid from taken))
            returning x.table_id, x.group_id, x.dispatch_id, x.status, x.outcome, x.n
          ),
          kept as (select d.* from d where d.table_id in (select id from live)),
          per_group as (
            select table_id, group_id, status, outcome, sum(n) as n from kept
             where group_id is not null group by 1, 2, 3, 4 having sum(n) <> 0
          ),
          g as (
            insert into cell_counts as c (table_id, group_id, status, outcome, n)
            select * from per_group order by 1, 2, 3, 4
            on conflict (table_id, group_id, status, outcome) do update set n = c.n + excluded.n
            returning 1
          ),
          r as (
            insert into run_cell_counts as c (dispatch_id, status, n)
            select k.dispatch_id, k.status, sum(k.n) from kept k
             where k.group_id is not null and k.dispatch_id is not null
               and exists (select 1 from dispatches dd where dd.id = k.dispatch_id)
             group by 1, 2 having sum(k.n) <> 0 order by 1, 2
            on conflict (dispatch_id, status) do update set n = c.n + excluded.n
            returning 1
          ),
          per_table as (
            select k.table_id, coalesce(sum(k.n) filter (where k.group_id is null), 0) as rows,
                   coalesce(sum(k.n) filter (where k.group_id is null), 0) <> 0
                     or k.table_id in (select table_id from per_group) as changed
              from kept k group by k.table_id
          ),
          t as (
            insert into table_counts as c (table_id, rows, progress_pending)
            select table_id, rows, changed from per_table order by 1
            on conflict (table_id) do update
              set rows = c.rows + excluded.rows,
                  progress_pending = c.progress_pending or excluded.progress_pending
            returning 1
          )
          select (select count(*) from d)::int as deltas`,
    );
    // At most one event a second per table: the change is kept pending until then.
    const due = await queryRows<{ tableId: string }>(
      tx,
      sql`update table_counts set progress_pending = false, progress_sent_at = now()
           where table_id in (
                   select table_id from table_counts
                    where progress_pending
                      and (progress_sent_at is null or progress_sent_at <= now() - interval '1 second')
                    order by table_id for update)
       returning table_id as "tableId"`,
    );
    for (const { tableId } of due) {
      const body = await readProgress(tx, { tableId });
      if (!body) continue;
      await appendEvent(tx, tableId, "progress", body);
      await notify(tx, EVENTS_CHANNEL, tableId);
    }
    return { deltas: folded?.deltas ?? 0, events: due.length };
  });
}
