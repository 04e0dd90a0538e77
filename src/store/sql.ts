import { type SQL, sql } from "drizzle-orm";
import { CELL_STATUSES, type CellStatus, isInFlight, isTerminal } from "@/domain/statuses";

/** A text[] parameter, sent as one JSON value (drizzle would spread a JS array into a list). */
export function textArray(values: readonly string[]): SQL {
  return sql`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}

/**
 * `('queued', 'running', 'paused')`: the statuses a Stop cancels (domain isInFlight), as
 * SQL literals built from the tuple (constants, never input), so a query reads the same
 * text to the planner as when it was written out.
 */
export const IN_FLIGHT: SQL = statusList(CELL_STATUSES.filter(isInFlight));

/** The terminal statuses (`isTerminal`) as an SQL list, the same way. */
export const TERMINAL: SQL = statusList(CELL_STATUSES.filter(isTerminal));

function statusList(statuses: readonly CellStatus[]): SQL {
  return sql.raw(`(${statuses.map((s) => `'${s}'`).join(", ")})`);
}

/** A jsonb parameter. */
export function jsonb(value: unknown): SQL {
  return sql`${JSON.stringify(value)}::jsonb`;
}

/** ISO-8601 UTC text of a timestamptz column, as the API returns timestamps. */
export function isoTime(column: SQL): SQL {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * "The cell is queued", for reads of one row's cells (off the primary key: a row has a
 * cell per group). Written so that it does not imply the window's partial index over
 * unfinished cells: a generic plan made while a fresh table's statistics were stale
 * combined that index with the key (BitmapAnd) and walked every unfinished cell of the
 * run for each step of each row, so a step's cost grew with the run.
 */
export function queuedOnRow(alias: string): SQL {
  return sql.raw(`${alias}.status::text = 'queued'`);
}

/**
 * The queued cell (alias) is covered by a large Stop's cancel scope (db/schema/
 * cancel-scopes.ts): it reads, counts and acts as `cancelled` until the rewrite job makes it
 * so. Only for a cell known to be queued. The same test as the database's
 * `cellflow_covered` (migration `cancel_scope_covered`), written out for the claim's hot
 * reads: the planner sees an index probe of `cancel_scopes` instead of a function call per
 * cell (W1 at 10,000 rows: 1,300–1,460 cells/s through the function, 1,480–1,650 inline).
 * A `where` Stop's rows are its ranges, probed by `cellflow_in_stop` (migration
 * `stop_ranges_covered`). The test `cancel-scope-covered-text` holds the two to the same answers.
 */
export function coveredText(alias: string): string {
  return `(${alias}.dispatch_id is not null and exists (select 1 from cancel_scopes s
     where s.dispatch_id = ${alias}.dispatch_id
       and (s.group_ids is null or ${alias}.group_id = any (s.group_ids))
       and (s.row_ids is null or ${alias}.row_id = any (s.row_ids))
       and (s.stop_seq is null or cellflow_in_stop(s.stop_seq, ${alias}.row_position))))`;
}

/**
 * The ids of the rows `where` Stop `seq` of table `tableId` matched, off its ranges and the
 * rows' position index: for set-based reads, where the planner may drive from them.
 */
export function stopRowIds(tableId: string, seq: number): SQL {
  return sql`select sr_r.id from stop_ranges sr
    join rows sr_r on sr_r.table_id = ${tableId} and sr_r.position between sr.lo and sr.hi
   where sr.seq = ${seq}`;
}

export function coveredCell(alias: string): SQL {
  return sql.raw(coveredText(alias));
}

/** The cell's (alias) status as reads report it: a covered queued cell is `cancelled`. */
export function effectiveStatus(alias: string): SQL {
  return sql.raw(
    `cellflow_cell_status(${alias}.status, ${alias}.dispatch_id, ${alias}.row_id, ${alias}.group_id, ${alias}.row_position)`,
  );
}

/** "The cell is queued and no Stop covers it": what a claim, a sweep or a window may take. */
export function claimableOnRow(alias: string): SQL {
  return sql`(${queuedOnRow(alias)} and not ${coveredCell(alias)})`;
}
