/**
 * Stamps `queued` cells for a run, set-based, one page of rows per statement. Each cell
 * gets a fresh execution id: the new authority. Mode guards live in the conflict clause,
 * so a stamp racing another writer can never replace what its mode must leave alone:
 * `new` never touches an existing cell; `incomplete` only re-arms `error`/`cancelled`
 * cells, a queued cell a large Stop's scope covers being one (in-flight ones are already
 * on their way; the covered one takes this run's dispatch id, so no scope covers it now); `stale` only re-arms `completed` cells
 * that ended before the run's cut-off; `all` replaces anything, and the
 * attempt it replaces becomes stale. A new execution starts counting attempts and
 * losses from 0.
 * A `resume` page starts an error/cancelled cell's new execution from what its last one
 * finished: the cell's own blocks' checkpoints are copied under the new id in the same
 * statement (so every later write stays fenced on the new execution and attempt), the
 * cell's `resumed_from` names the old one, and the new execution's `resumes` lists the
 * old one and those it resumed, whose step records (blocks inside child runs, foreach
 * items: any number of them) the new execution reads where they are instead of a copy —
 * a page's cost stays one row per cell whatever their fan-outs recorded. The replaced
 * attempt is kept in the cell's history by a trigger (migration 0025). Each cell keeps the
 * number of the run request that stamped it (`request_seq`, the greater on a re-stamp):
 * what lifts a Stop's hold on its row (`notHeld`).
 * Events stay bounded by pages, not cells: a run's page (a `dispatchId`, only given by a
 * run's page under its locked `active` dispatch) writes one `dispatch` event with its
 * counts and position range, and a `cell` event per cell only when it stamped at most
 * CELL_EVENTS_UP_TO cells; a carrier's auto-run stamp (one cell, no run) writes its
 * `cell` event.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import { assertNever, type RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { whereSql } from "../rows/where-sql";
import { coveredCell, textArray } from "../sql";
import { cellEventData } from "./transition";

export interface StampPage {
  tableId: string;
  dispatchId: string | null;
  /**
   * The run request's number (`dispatches.seq`), kept on every cell the page stamps as
   * `request_seq` (a re-stamp keeps the greater). Absent for the carrier's auto-run, which
   * is no request: its cell inherits the row's newest, so it lifts no hold.
   */
  requestSeq?: number;
  groupIds: string[];
  mode: RunMode;
  /**
   * Auto-fire: each group's `dependsOn` columns, which must all be non-empty (not null,
   * "", false, [] or {}) in the row for its cell to be stamped. Absent for manual runs,
   * which ignore dependencies.
   */
  dependsOn?: Record<string, string[]>;
  rowIds: string[] | null;
  /** The run's row filter (checked conditions); absent or empty: every row. */
  where?: readonly TypedCondition[] | null;
  afterPosition: number;
  maxRows: number;
  /** Cells scoped Stops took out of the run (see dispatches.excluded): never stamped. */
  excluded?: readonly StopExclusion[];
  /**
   * The carrier's auto-run stamp: refused while a Stop covers the row and nothing newer
   * happened there since. `upstream` is the group and every group it depends on,
   * transitively: a Stop of any of them holds it.
   */
  hold?: { upstream: readonly string[] };
  /** The carrier's auto-run stamp: refused while the table's auto-run switch is off. */
  switched?: boolean;
  /** Error/cancelled cells start from their last execution's checkpoints (see the header). */
  resume?: boolean;
  /**
   * Mode `stale`: a completed cell that ended more than `hours` before `asOf` (the run's
   * creation; null: now, for a dry run) is stamped again.
   */
  stale?: StaleCutoff;
}

export interface StaleCutoff {
  hours: number;
  asOf: string | null;
}

/** The end time before which a completed cell is stale. */
function staleBefore(stale: StaleCutoff | undefined): SQL {
  if (!stale) throw new Error('mode "stale" needs staleAfterHours');
  return sql`(coalesce(${stale.asOf}::timestamptz, now()) - ${stale.hours}::float8 * interval '1 hour')`;
}

/**
 * Rows and groups a scoped Stop took out of a run (null: all). `stop`: the Stop had a
 * `where`, and its rows are the ones it matched (`stop_ranges` under that sequence number).
 */
export interface StopExclusion {
  rows: string[] | null;
  groups: string[] | null;
  stop?: number;
}

export interface StampResult {
  rows: number;
  cells: number;
  /** Position of the last row looked at, or null when no row was left in scope. */
  lastPosition: number | null;
  /**
   * Rows the page looked at. Fewer than `maxRows`: no row after them was in scope when
   * the page ran, so the run needs no further page to find that out.
   */
  scanned: number;
}

/** Which existing cell (alias c, possibly absent) this mode may stamp. */
export function eligible(scope: { mode: RunMode; stale?: StaleCutoff }): SQL {
  const { mode } = scope;
  switch (mode) {
    case "all":
      return sql`true`;
    case "incomplete":
      return sql`(c.status is null or c.status in ('error', 'cancelled')
                  or (c.status = 'queued' and ${coveredCell("c")}))`;
    case "new":
      return sql`c.status is null`;
    // The cell's last attempt ended in error (a cell only keeps its last attempt's status).
    case "failed":
      return sql`c.status = 'error'`;
    // Paused and in-flight cells are on their way; error and cancelled ones are not stale.
    case "stale":
      return sql`(c.status is null or (c.status = 'completed' and c.finished_at < ${staleBefore(scope.stale)}))`;
    default:
      return assertNever(mode);
  }
}

function replaceable(scope: { mode: RunMode; stale?: StaleCutoff }): SQL {
  const { mode } = scope;
  switch (mode) {
    case "all":
      return sql`true`;
    case "incomplete":
      return sql`(cells.status in ('error', 'cancelled') or (cells.status = 'queued' and ${coveredCell("cells")}))`;
    case "new":
      return sql`false`;
    case "failed":
      return sql`cells.status = 'error'`;
    case "stale":
      return sql`(cells.status = 'completed' and cells.finished_at < ${staleBefore(scope.stale)})`;
    default:
      return assertNever(mode);
  }
}

/**
 * What a replacing stamp records as the execution it resumes from: on a resume page, the
 * replaced cell's (the row version the conflict locked, so never a stale read) if it
 * ended in error or cancelled and recorded something to reuse (checkpoints, step records,
 * or executions it resumed itself); otherwise null.
 */
function resumedFrom(page: StampPage): SQL {
  if (!page.resume) return sql`null`;
  return sql`case when cells.status in ('error', 'cancelled')
                   and (exists (select 1 from executions e
                                 where e.id = cells.execution_id
                                   and (e.checkpoints <> '{}'::jsonb or e.resumes <> '{}'))
                        or exists (select 1 from execution_steps s
                                    where s.execution_id = cells.execution_id))
                  then cells.execution_id end`;
}

/**
 * The resumed executions (resume pages only): a copy of the checkpoints they resume from,
 * without the blocks marked `retryOnResume` (they hold failed items: the resumed execution
 * runs them again, reusing their finished parts), and the chain of executions whose step
 * records they reuse (`resumes`: the old one first, then the ones it resumed).
 */
function resumeCopy(page: StampPage): SQL {
  if (!page.resume) return sql``;
  return sql`resumed as (
          insert into executions (id, table_id, row_id, group_id, checkpoints, resumes)
          select i.execution_id, i.table_id, i.row_id, i.group_id,
                 coalesce((select jsonb_object_agg(k, v)
                             from jsonb_each(e.checkpoints) as x(k, v)
                            where (v->>'retryOnResume') is distinct from 'true'), '{}'::jsonb),
                 array_prepend(i.resumed_from, coalesce(e.resumes, '{}'))
            from ins i left join executions e on e.id = i.resumed_from
           where i.resumed_from is not null
          on conflict (id) do nothing
          returning id
        ),`;
}

/** The groups to stamp (alias g) and whether row `r` meets g's dependencies. */
function groupSource(page: StampScope): { from: SQL; depsMet: SQL } {
  if (!page.dependsOn)
    return { from: sql`unnest(${textArray(page.groupIds)}) as g(group_id)`, depsMet: sql`true` };
  const deps = Object.fromEntries(page.groupIds.map((g) => [g, page.dependsOn?.[g] ?? []]));
  return {
    from: sql`jsonb_each(${JSON.stringify(deps)}::jsonb) as g(group_id, deps)`,
    depsMet: sql`jsonb_array_length(g.deps) > 0 and not exists (
      select 1 from jsonb_array_elements_text(g.deps) as dep(col)
       where coalesce(r.data -> dep.col, 'null'::jsonb) in ('null'::jsonb, '""'::jsonb, 'false'::jsonb, '[]'::jsonb, '{}'::jsonb))`,
  };
}

/** Whether (row r, group g) is out of the run: some scoped Stop covers it. */
function notExcluded(page: StampScope): SQL {
  if (!page.excluded || page.excluded.length === 0) return sql`true`;
  return sql`not exists (
    select 1 from jsonb_array_elements(${JSON.stringify(page.excluded)}::jsonb) x
     where (x->'rows' = 'null'::jsonb or x->'rows' @> to_jsonb(r.id))
       and (x->'groups' = 'null'::jsonb or x->'groups' @> to_jsonb(g.group_id))
       and (x->'stop' is null or cellflow_in_stop((x->>'stop')::bigint, r.position)))`;
}

/**
 * The hold of a Stop on a row's auto-run: a Stop covering the row (and the group or one
 * it depends on) newer than the newest run request that stamped one of the row's cells.
 * Requests and Stops draw their numbers from one sequence when they are made, so only a
 * request made after the Stop lifts it, whenever its pages stamp: a run still stamping
 * when the Stop came is older than it on every page. `request_seq` survives a resume and
 * a carrier's auto-run stamp (neither is a request), so neither hides nor fakes one.
 */
function notHeld(page: StampScope): SQL {
  if (!page.hold) return sql`true`;
  return sql`not exists (
    select 1 from stops s
     where s.table_id = ${page.tableId}
       and (s.row_ids is null or r.id = any(s.row_ids))
       and (not s.matched or cellflow_in_stop(s.seq, r.position))
       and (s.group_ids is null or s.group_ids && ${textArray([...page.hold.upstream])})
       and (s.dispatch_id is null
            or exists (select 1 from cells sc where sc.row_id = r.id and sc.dispatch_id = s.dispatch_id))
       and s.seq > coalesce((select max(rc.request_seq) from cells rc where rc.row_id = r.id), 0))`;
}

/** The table's auto-run switch, read in the stamping statement itself: off, nothing. */
function switchedOn(page: StampScope): SQL {
  if (!page.switched) return sql`true`;
  return sql`exists (select 1 from tables st where st.id = ${page.tableId} and st.auto_run)`;
}

/** The `request_seq` of a stamped cell (row `p`): the request's, or the row's newest. */
function requestSeqOf(page: StampPage): SQL {
  if (page.requestSeq !== undefined) return sql`${page.requestSeq}::bigint`;
  return sql`(select max(rc.request_seq) from cells rc where rc.row_id = p.row_id)`;
}

/** What scopes a page besides its mode: the groups (alias g), guards and row filter. */
export function scopeOf(page: StampScope): { from: SQL; guards: SQL; rowFilter: SQL } {
  const groups = groupSource(page);
  return {
    from: groups.from,
    guards: sql`${groups.depsMet} and ${notExcluded(page)} and ${notHeld(page)} and ${switchedOn(page)}`,
    rowFilter: sql`${page.rowIds ? sql`and r.id = any(${textArray(page.rowIds)})` : sql``}
      ${page.where && page.where.length > 0 ? sql`and ${whereSql(page.where)}` : sql``}`,
  };
}

/**
 * The rows of a scope in position order after `afterPosition`, at most `limit` (null:
 * all), each with something this scope would stamp: what a page stamps, a count counts
 * and an estimate reads. Selects `row_id`, `position` and `data`.
 */
export function scopedRows(
  scope: StampScope,
  page: { afterPosition: number | null; limit: number | null },
): SQL {
  const { guards, rowFilter, ...groups } = scopeOf(scope);
  return sql`select r.id as row_id, r.position, r.data from rows r
           where r.table_id = ${scope.tableId}
             ${page.afterPosition === null ? sql`` : sql`and r.position > ${page.afterPosition}`}
             ${rowFilter}
             and exists (select 1 from ${groups.from}
                          left join cells c on c.row_id = r.id and c.group_id = g.group_id
                         where ${eligible(scope)} and ${guards})
           order by r.position
           ${page.limit === null ? sql`` : sql`limit ${page.limit}`}`;
}

export async function stampPage(db: Db, page: StampPage): Promise<StampResult> {
  const { guards, ...groups } = scopeOf(page);
  const [result] = await queryRows<{
    cells: number;
    rows: number;
    last: number | null;
    scanned: number;
  }>(
    db,
    sql`with page_rows as (
          ${scopedRows(page, { afterPosition: page.afterPosition, limit: page.maxRows })}
        ),
        ins as (
          insert into cells (table_id, row_id, group_id, row_position, status, execution_id, dispatch_id,
                             request_seq, queued_at, updated_at)
          select ${page.tableId}, p.row_id, g.group_id, p.position, 'queued',
                 'ex2_' || lpad(to_hex(nextval('cellflow_execution_seq')), 12, '0')
                   || left(replace(gen_random_uuid()::text, '-', ''), 20),
                 ${page.dispatchId}, ${requestSeqOf(page)}, now(), now()
            from page_rows p
           cross join lateral (select p.row_id as id, p.position, p.data) as r
           cross join ${groups.from}
            left join cells c on c.row_id = p.row_id and c.group_id = g.group_id
           where ${eligible(page)} and ${guards}
          on conflict (row_id, group_id) do update set
            status = 'queued', execution_id = excluded.execution_id, dispatch_id = excluded.dispatch_id,
            request_seq = greatest(cells.request_seq, excluded.request_seq),
            outcome = null, error = null, running_block_ids = '{}', block_errors = '{}'::jsonb,
            details = '{}'::jsonb, run_id = null, attempt = 0, losses = 0, queued_at = now(), started_at = null,
            finished_at = null, updated_at = now(), resumed_from = ${resumedFrom(page)}
          where ${replaceable(page)}
          returning table_id, row_id, group_id, status, outcome, execution_id, error, running_block_ids,
                    block_errors, dispatch_id, attempt, resumed_from
        ),
        ${resumeCopy(page)}
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${cellEventData} || jsonb_build_object('dispatchId', dispatch_id) from ins
           where ${page.dispatchId}::text is null or (select count(*) from ins) <= ${CELL_EVENTS_UP_TO}
          returning table_id
        ),
        page_ev as (
          insert into events (table_id, kind, data)
          select ${page.tableId}, 'dispatch', jsonb_build_object(
                   'dispatchId', ${page.dispatchId}::text, 'status', 'active',
                   'stamped', jsonb_build_object(
                     'cells', (select count(*) from ins), 'rows', (select count(distinct row_id) from ins),
                     'afterPosition', ${page.afterPosition}::bigint,
                     'lastPosition', (select max(position) from page_rows)))
           where ${page.dispatchId}::text is not null and exists (select 1 from ins)
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', ${page.tableId})
                  where exists (select 1 from ev) or exists (select 1 from page_ev))
        select (select count(*) from ins)::int as cells,
               (select count(distinct row_id) from ins)::int as rows,
               (select max(position) from page_rows) as last,
               (select count(*) from page_rows)::int as scanned,
               (select count(*) from wake)::int as woke`,
    // Named, so a connection parses and plans it once per shape: most of a one-row page's
    // time went there (the Run request's page is on the stamp → running path). Not with a
    // `where`, whose compiled conditions make the text of each filter a shape of its own.
    { prepare: !page.where || page.where.length === 0 },
  );
  return {
    cells: result?.cells ?? 0,
    rows: result?.rows ?? 0,
    lastPosition: result?.last ?? null,
    scanned: result?.scanned ?? 0,
  };
}

/** A run's scope without its page: what `countScope` counts. */
export type StampScope = Omit<StampPage, "dispatchId" | "afterPosition" | "maxRows">;

/**
 * Read-only: the rows and cells (by group) a run of this scope would stamp now, its
 * first `limit` rows with something to stamp, counted with the very conditions
 * `stampPage` stamps with. Writes nothing.
 */
export async function countScope(
  db: Db,
  scope: StampScope & { limit: number | null },
  /** Groups' run conditions: their cells on rows where one does not hold are also counted apart. */
  runIf: Readonly<Record<string, readonly TypedCondition[]>> = {},
): Promise<{
  rows: number;
  cells: Record<string, number>;
  /** Of `cells`, by group: those whose run condition does not hold on the row now. */
  notMet: Record<string, number>;
}> {
  const { guards, ...groups } = scopeOf(scope);
  const judged = Object.entries(runIf).filter(([, conds]) => conds.length > 0);
  // The run condition of group g on row r, false where it does not hold (the claim's test).
  const notMet =
    judged.length === 0
      ? sql`false`
      : sql`case ${sql.join(
          judged.map(
            ([groupId, conds]) => sql`when g.group_id = ${groupId} then not ${whereSql(conds)}`,
          ),
          sql` `,
        )} else false end`;
  const [result] = await queryRows<{
    rows: number;
    cells: Record<string, number>;
    notMet: Record<string, number>;
  }>(
    db,
    sql`with scoped_rows as (
          ${scopedRows(scope, { afterPosition: null, limit: scope.limit })}
        ),
        by_group as (
          select g.group_id, count(*)::int as n, count(*) filter (where ${notMet})::int as not_met
            from scoped_rows p
           cross join lateral (select p.row_id as id, p.position, p.data) as r
           cross join ${groups.from}
            left join cells c on c.row_id = p.row_id and c.group_id = g.group_id
           where ${eligible(scope)} and ${guards}
           group by g.group_id
        )
        select (select count(*) from scoped_rows)::int as rows,
               coalesce((select jsonb_object_agg(group_id, n) from by_group), '{}'::jsonb) as cells,
               coalesce((select jsonb_object_agg(group_id, not_met) from by_group), '{}'::jsonb) as "notMet"`,
  );
  return { rows: result?.rows ?? 0, cells: result?.cells ?? {}, notMet: result?.notMet ?? {} };
}
