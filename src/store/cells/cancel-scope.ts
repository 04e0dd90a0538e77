/**
 * A large Stop's cancel of queued cells by scope (db/schema/cancel-scopes.ts): instead of
 * rewriting every queued cell of the runs it covers, the Stop records one scope per run and
 * moves their counts from `queued` to `cancelled`, in its own transaction. Invariants: the
 * scopes are recorded under the table's scope lock, taken exclusively before the count, so
 * every claim and every write of a queued cell of a run either committed before the count
 * (and is counted as what it wrote) or sees the scope (migration `cancel_scope_covered`);
 * what the scope covers is counted once (a cell an earlier scope covers is left out), so
 * progress and a run's counts stay equal to a full count of what reads show; each run gets
 * one `dispatch` event with its number, as a Stop's events are bounded by runs. Its cost
 * is a count: of a whole run of one group, off the run's counters; of some groups of a run
 * on all of its rows, off its counters per group (`run_group_cell_counts`, complete for the
 * runs created since it exists: `dispatches.group_counted`); neither reads a cell. A
 * `where` that matched most of the table takes those counters less the queued cells
 * between its ranges (db/schema/stops.ts), so it reads what it left out. Otherwise (some
 * rows, a `where` that matched less, an older run) it counts the cells in scope.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { textArray } from "../sql";
import type { CancelScope } from "./cancel";

/**
 * The queued cells in `scope` of the runs `runs`, as (dispatch_id, row_id, group_id,
 * row_position). A
 * `where` Stop's are found off its ranges, each a walk of the runs' unfinished cells at its
 * positions (cells_dispatch_active_idx), so the cost follows the cells it matched, not the
 * size of the runs. `runs` is a text[] value (cast: a subquery in parentheses alone would
 * read as rows for `any` to compare with).
 */
function queuedInScope(scope: CancelScope, runs: SQL): SQL {
  const terms: SQL[] = [sql`c.dispatch_id = any(${runs})`, sql`c.status = 'queued'`];
  if (scope.rowIds) terms.push(sql`c.row_id = any(${textArray(scope.rowIds)})`);
  if (scope.groupIds) terms.push(sql`c.group_id = any(${textArray(scope.groupIds)})`);
  const cols = sql`c.dispatch_id, c.row_id, c.group_id, c.row_position`;
  const where = sql.join(terms, sql` and `);
  if (scope.stopSeq === undefined) return sql`select ${cols} from cells c where ${where}`;
  // `offset 0` keeps the walk per range: pulled up into a join, it was planned the other
  // way round (every queued cell of the runs, each testing the ranges below it), quadratic
  // in a scattered match (minutes at 50,000 ranges).
  return sql`select ${cols} from stop_ranges sr
    cross join lateral (select ${cols} from cells c
                         where ${where} and c.row_position between sr.lo and sr.hi offset 0) c
   where sr.seq = ${scope.stopSeq}`;
}

/**
 * A `where` Stop's count by complement: the queued cells of the runs `runs` (of the groups
 * in scope) at positions between its ranges, found off the same index gap by gap. Taken off
 * a run's counters per group, it leaves the cells the Stop matched: when most rows matched,
 * the cheaper of the two to count.
 */
function queuedBetweenRanges(scope: CancelScope & { stopSeq: number }, runs: SQL): SQL {
  const groups = scope.groupIds ? sql`and c.group_id = any(${textArray(scope.groupIds)})` : sql``;
  return sql`with gaps as (
      select coalesce(lag(sr.hi) over (order by sr.lo) + 1, ${POSITION_MIN}) as lo, sr.lo - 1 as hi
        from stop_ranges sr where sr.seq = ${scope.stopSeq}
      union all
      select coalesce(max(sr.hi) + 1, ${POSITION_MIN}), ${POSITION_MAX} from stop_ranges sr where sr.seq = ${scope.stopSeq}
    )
    select c.dispatch_id, c.row_id, c.group_id, c.row_position from gaps x
     cross join lateral (select c.dispatch_id, c.row_id, c.group_id, c.row_position from cells c
                          where c.dispatch_id = any(${runs}) and c.status = 'queued' ${groups}
                            and c.row_position between x.lo and x.hi offset 0) c`;
}

const POSITION_MIN = sql.raw("(-9223372036854775808)::bigint");
const POSITION_MAX = sql.raw("9223372036854775807::bigint");

/**
 * The active runs of the Stop's scope, and whether their queued cells in scope are more
 * than `eagerUpTo` (read with a limit, so the answer costs at most that many entries).
 */
export async function runsBeyondEager(
  db: Db,
  scope: CancelScope,
  eagerUpTo: number,
): Promise<string[] | null> {
  const only = scope.dispatchId ? sql`and d.id = ${scope.dispatchId}` : sql``;
  const [row] = await queryRows<{ runs: string[]; many: boolean }>(
    db,
    sql`with runs as (select d.id from dispatches d where d.table_id = ${scope.tableId} and d.status = 'active' ${only})
        select coalesce((select array_agg(id order by id) from runs), '{}') as runs,
               (select count(*) from (select 1 from (${queuedInScope(scope, sql`(select array_agg(id) from runs)::text[]`)}) c
                                       limit ${eagerUpTo + 1}) x) > ${eagerUpTo} as many`,
  );
  return row?.many ? row.runs : null;
}

/**
 * Records the scope of each run in `runs` and moves the counts of the queued cells it
 * covers to `cancelled`; returns how many it covered. Call it in the Stop's transaction,
 * after the runs' stamping is held and before any cell is locked (the scope lock comes
 * first: a claim takes it before it locks a cell).
 */
export async function recordCancelScopes(
  db: Db,
  scope: CancelScope,
  runs: readonly string[],
): Promise<number> {
  await db.execute(sql`select cellflow_scope_lock(${scope.tableId})`);
  const groups = scope.groupIds ? sql`${textArray(scope.groupIds)}` : sql`null::text[]`;
  const wholeRows = scope.rowIds === undefined && scope.stopSeq === undefined;
  const { stopSeq } = scope;
  // A `where` Stop that matched most of the table's positions counts what it left out.
  const mostMatched =
    stopSeq !== undefined && scope.rowIds === undefined
      ? sql`coalesce((select sum(sr.hi - sr.lo + 1) from stop_ranges sr where sr.seq = ${stopSeq}), 0) * 2
              > (select t.next_position from tables t where t.id = ${scope.tableId})`
      : sql`false`;
  const outside =
    stopSeq !== undefined
      ? queuedBetweenRanges(
          { ...scope, stopSeq },
          sql`(select array_agg(id) from runs where by_gaps)::text[]`,
        )
      : sql`select null::text as dispatch_id, null::text as row_id, null::text as group_id,
                   null::bigint as row_position where false`;
  // A Stop naming every group of a run covers the whole run: the scope says so (null), which
  // lets the run's end read nothing cell by cell (finish-cancelled.ts).
  const [row] = await queryRows<{ covered: number }>(
    db,
    sql`with runs as (
          select d.id, exists (select 1 from cancel_scopes s where s.dispatch_id = d.id) as scoped,
                 case when ${groups} is null or d.group_ids <@ ${groups} then null else ${groups} end as group_ids,
                 d.group_ids[1] as only_group,
                 ${wholeRows} and cardinality(d.group_ids) = 1 and (${groups} is null or d.group_ids <@ ${groups})
                   as by_counters,
                 ${wholeRows} and d.group_counted as by_group_counters,
                 ${mostMatched} and d.group_counted as by_gaps,
                 d.group_ids as run_groups
            from dispatches d where d.id = any(${textArray([...runs])})
        ),
        -- The queued cells of each run and group in scope, off its counters per group, when
        -- they hold all of its cells (exact here: every writer of its queued cells committed
        -- before the scope lock was granted, or waits for it; a covered cell is cancelled there).
        group_counts as (
          select r.id as dispatch_id, g.group_id, q.n
            from runs r
           cross join lateral unnest(r.run_groups) as g(group_id)
           cross join lateral (
             select (coalesce((select sum(k.n) from run_group_cell_counts k
                                where k.dispatch_id = r.id and k.group_id = g.group_id and k.status = 'queued'), 0)
                   + coalesce((select sum(x.n) from cell_count_deltas x
                                where x.table_id = ${scope.tableId} and x.dispatch_id = r.id
                                  and x.group_id = g.group_id and x.status = 'queued'), 0))::int as n) q
           where not r.by_counters and (r.by_group_counters or r.by_gaps)
             and (${groups} is null or g.group_id = any(${groups}))
        ),
        -- What a where Stop left out of the runs counted by complement, but for the cells an
        -- earlier scope covers (the counters have those as cancelled already).
        outside as (
          select c.dispatch_id, c.group_id, count(*)::int as n
            from (${outside}) c join runs r on r.id = c.dispatch_id
           where not (r.scoped and cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position))
           group by 1, 2
        ),
        n as (
          -- A whole run of one group: every queued cell of it, as its counters have them
          -- (exact, as above), so a million cells cost no scan. They count a covered cell as
          -- cancelled already, so an earlier scope's cells are not counted again.
          select r.id as dispatch_id, r.only_group as group_id, q.n
            from runs r
           cross join lateral (
             select (coalesce((select sum(k.n) from run_cell_counts k where k.dispatch_id = r.id and k.status = 'queued'), 0)
                   + coalesce((select sum(x.n) from cell_count_deltas x
                                where x.table_id = ${scope.tableId} and x.dispatch_id = r.id
                                  and x.group_id is not null and x.status = 'queued'), 0))::int as n) q
           where r.by_counters and q.n > 0
          union all
          -- Some groups of a run, or a run of several: off its counters per group; a where
          -- that matched most rows: the same, less what it left out.
          select k.dispatch_id, k.group_id, k.n - coalesce(o.n, 0) as n
            from group_counts k
            left join outside o on o.dispatch_id = k.dispatch_id and o.group_id = k.group_id
           where k.n - coalesce(o.n, 0) > 0
          union all
          select c.dispatch_id, c.group_id, count(*)::int as n
            from (${queuedInScope(scope, sql`(select array_agg(id) from runs where not by_counters and not by_group_counters and not by_gaps)::text[]`)}) c
            join runs r on r.id = c.dispatch_id
           where not (r.scoped and cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position))
           group by 1, 2
        ),
        ins as (
          insert into cancel_scopes (table_id, dispatch_id, group_ids, row_ids, stop_seq)
          select ${scope.tableId}, r.id, r.group_ids,
                 ${scope.rowIds ? sql`${textArray(scope.rowIds)}` : sql`null::text[]`},
                 ${scope.stopSeq ?? null}::bigint
            from runs r
          returning id
        ),
        moved as (
          insert into cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
          select ${scope.tableId}, n.group_id, n.dispatch_id, x.status::cell_status, null, x.sign * n.n
            from n cross join (values ('queued', -1), ('cancelled', 1)) as x(status, sign)
          returning n
        ),
        per_run as (select dispatch_id, sum(n)::int as n from n group by 1),
        ev as (
          insert into events (table_id, kind, data)
          select ${scope.tableId}, 'dispatch',
                 jsonb_build_object('dispatchId', d.id, 'status', d.status, 'cancelled', p.n)
            from per_run p join dispatches d on d.id = p.dispatch_id
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', ${scope.tableId}) where exists (select 1 from ev))
        select coalesce((select sum(n) from per_run), 0)::int as covered,
               (select count(*) from ins) as scopes, (select count(*) from moved) as deltas,
               (select count(*) from wake) as woke`,
  );
  return row?.covered ?? 0;
}
