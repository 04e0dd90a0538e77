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
 * runs created since it exists: `dispatches.group_counted`); neither reads a cell.
 * Otherwise (some rows, a `where`, an older run) it counts the cells in scope.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { textArray } from "../sql";
import type { CancelScope } from "./cancel";

/** The queued cells of run `c.dispatch_id` a scope of `scope` covers (alias c). */
function inScope(scope: CancelScope): SQL {
  const terms: SQL[] = [sql`c.status = 'queued'`];
  if (scope.rowIds) terms.push(sql`c.row_id = any(${textArray(scope.rowIds)})`);
  if (scope.groupIds) terms.push(sql`c.group_id = any(${textArray(scope.groupIds)})`);
  if (scope.stopSeq !== undefined)
    terms.push(sql`c.row_id in (select row_id from stop_rows where seq = ${scope.stopSeq})`);
  return sql.join(terms, sql` and `);
}

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
               (select count(*) from (select 1 from cells c
                                       where c.dispatch_id in (select id from runs) and ${inScope(scope)}
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
                 d.group_ids as run_groups
            from dispatches d where d.id = any(${textArray([...runs])})
        ),
        n as (
          -- A whole run of one group: every queued cell of it, as its counters have them
          -- (exact here: every writer of its queued cells committed before the scope lock was
          -- granted, or waits for it), so a million cells cost no scan. They count a covered
          -- cell as cancelled already, so an earlier scope's cells are not counted again.
          select r.id as dispatch_id, r.only_group as group_id, q.n
            from runs r
           cross join lateral (
             select (coalesce((select sum(k.n) from run_cell_counts k where k.dispatch_id = r.id and k.status = 'queued'), 0)
                   + coalesce((select sum(x.n) from cell_count_deltas x
                                where x.table_id = ${scope.tableId} and x.dispatch_id = r.id
                                  and x.group_id is not null and x.status = 'queued'), 0))::int as n) q
           where r.by_counters and q.n > 0
          union all
          -- Some groups of a run, or a run of several: off its counters per group, when they
          -- hold all of its cells (the same exactness; a covered cell is cancelled there too).
          select r.id as dispatch_id, g.group_id, q.n
            from runs r
           cross join lateral unnest(r.run_groups) as g(group_id)
           cross join lateral (
             select (coalesce((select sum(k.n) from run_group_cell_counts k
                                where k.dispatch_id = r.id and k.group_id = g.group_id and k.status = 'queued'), 0)
                   + coalesce((select sum(x.n) from cell_count_deltas x
                                where x.table_id = ${scope.tableId} and x.dispatch_id = r.id
                                  and x.group_id = g.group_id and x.status = 'queued'), 0))::int as n) q
           where not r.by_counters and r.by_group_counters
             and (${groups} is null or g.group_id = any(${groups})) and q.n > 0
          union all
          select c.dispatch_id, c.group_id, count(*)::int as n
            from cells c join runs r on r.id = c.dispatch_id
           where c.dispatch_id in (select id from runs where not by_counters and not by_group_counters)
             and ${inScope(scope)}
             and not (r.scoped and cellflow_covered(c.dispatch_id, c.row_id, c.group_id))
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
