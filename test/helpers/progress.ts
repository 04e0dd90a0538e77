/**
 * The progress counters judged against a full count: what `GET /progress` and a run's
 * counts must equal, computed the slow way (count(*) over the table's cells and rows).
 */

import { isDeepStrictEqual } from "node:util";
import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import { outcomeField, type TableProgress } from "@/contracts/progress";
import { CELL_OUTCOMES, CELL_STATUSES, type CellStatus } from "@/domain/statuses";
import { getDispatch } from "@/store/dispatches/read";
import { foldCounts } from "@/store/progress/fold";
import { readProgress } from "@/store/progress/read";
import { waitFor } from "./processes";

/** The progress body by a full count of the table's cells and rows. */
export async function fullProgress(db: Db, tableId: string): Promise<TableProgress> {
  const [t] = await queryRows<{ groups: string[]; rows: number }>(
    db,
    sql`select array(select g->>'id' from jsonb_array_elements(schema->'groups') g) as groups,
               (select count(*)::int from rows where table_id = ${tableId}) as rows
          from tables where id = ${tableId}`,
  );
  const cells = await queryRows<{ groupId: string; status: CellStatus; outcome: string | null }>(
    db,
    sql`select group_id as "groupId", status::text as status, outcome::text as outcome
          from cells where table_id = ${tableId}`,
  );
  const rows = t?.rows ?? 0;
  return {
    rows,
    groups: (t?.groups ?? []).map((groupId) => {
      const mine = cells.filter((c) => c.groupId === groupId);
      const by = (status: string, outcome?: string) =>
        mine.filter((c) => c.status === status && (outcome === undefined || c.outcome === outcome))
          .length;
      return {
        groupId,
        ...Object.fromEntries(CELL_STATUSES.map((s) => [s, by(s)])),
        ...Object.fromEntries(CELL_OUTCOMES.map((o) => [outcomeField(o), by("completed", o)])),
        neverRun: rows - mine.length,
      } as TableProgress["groups"][number];
    }),
  };
}

/** A run's cells by status, by a full count. */
export async function fullRunCounts(db: Db, dispatchId: string): Promise<Record<string, number>> {
  const cells = await queryRows<{ status: string; n: number }>(
    db,
    sql`select status::text as status, count(*)::int as n from cells
         where dispatch_id = ${dispatchId} group by 1`,
  );
  return Object.fromEntries(
    CELL_STATUSES.map((s) => [s, cells.find((c) => c.status === s)?.n ?? 0]),
  );
}

/** A run's cells by group and status (`group/status` → n, none left out at 0), by a full count. */
export async function fullRunGroupCounts(
  db: Db,
  dispatchId: string,
): Promise<Record<string, number>> {
  return countsByKey(
    await queryRows<{ key: string; n: number }>(
      db,
      sql`select group_id || '/' || status::text as key, count(*)::int as n from cells
           where dispatch_id = ${dispatchId} group by 1`,
    ),
  );
}

/** A run's counts by group and status as its counters have them: base + deltas. */
export async function runGroupCounts(db: Db, dispatchId: string): Promise<Record<string, number>> {
  return countsByKey(
    await queryRows<{ key: string; n: number }>(
      db,
      sql`select key, sum(n)::int as n from (
            select group_id || '/' || status::text as key, n from run_group_cell_counts
             where dispatch_id = ${dispatchId}
            union all
            select group_id || '/' || status::text, n from cell_count_deltas
             where dispatch_id = ${dispatchId} and group_id is not null) c
          group by 1`,
    ),
  );
}

function countsByKey(rows: { key: string; n: number }[]): Record<string, number> {
  return Object.fromEntries(rows.filter((r) => r.n !== 0).map((r) => [r.key, r.n]));
}

/** Folds, waiting out a fold another process is making (a worker's own loop). */
export async function foldNow(db: Db): Promise<void> {
  // A deadline, not a count of tries: a worker's fold of a large batch may hold the lock a while.
  if (!(await waitFor(async () => (await foldCounts(db)) !== null, 5_000, 10)))
    throw new Error("the fold's lock stayed taken");
}

/** The table's unfolded deltas. */
export async function deltasOf(db: Db, tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from cell_count_deltas where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

/**
 * What the counters say against what a full count says, for the table and each of its
 * runs (and by group, for a run whose group counters are complete): before a fold (base + deltas), and after one (the base alone: no delta of the
 * table is left). Findings as text; none when they agree.
 */
export async function counterFindings(db: Db, tableId: string): Promise<string[]> {
  const findings: string[] = [];
  const compare = async (when: string) => {
    const counted = await readProgress(db, { tableId });
    const full = await fullProgress(db, tableId);
    if (!isDeepStrictEqual(counted, full))
      findings.push(`${when}: progress ${JSON.stringify(counted)} ≠ full ${JSON.stringify(full)}`);
    const runs = await queryRows<{ id: string; groupCounted: boolean }>(
      db,
      sql`select id, group_counted as "groupCounted" from dispatches where table_id = ${tableId}`,
    );
    for (const { id, groupCounted } of runs) {
      const view = await getDispatch(db, tableId, id);
      const full = await fullRunCounts(db, id);
      if (!isDeepStrictEqual(view?.counts, full))
        findings.push(
          `${when}: run ${id} counts ${JSON.stringify(view?.counts)} ≠ ${JSON.stringify(full)}`,
        );
      if (!groupCounted) continue;
      const byGroup = await runGroupCounts(db, id);
      const fullByGroup = await fullRunGroupCounts(db, id);
      if (!isDeepStrictEqual(byGroup, fullByGroup))
        findings.push(
          `${when}: run ${id} counts by group ${JSON.stringify(byGroup)} ≠ ${JSON.stringify(fullByGroup)}`,
        );
    }
  };
  await compare("before a fold");
  await foldNow(db);
  const left = await deltasOf(db, tableId);
  if (left > 0) findings.push(`after a fold: ${left} deltas of the table left`);
  await compare("after a fold");
  return findings;
}

/**
 * The progress read equals a full count of what reads show (a queued cell a cancel scope
 * covers as `cancelled`), status by status, for every group: before any rewrite.
 */
export async function expectProgressExact(db: Db, tableId: string): Promise<void> {
  const full = await queryRows<{ groupId: string; status: string; n: number }>(
    db,
    sql`select group_id as "groupId",
               cellflow_cell_status(status, dispatch_id, row_id, group_id, row_position)::text as status,
               count(*)::int as n
          from cells where table_id = ${tableId} group by 1, 2`,
  );
  const progress = await readProgress(db, { tableId });
  for (const g of progress?.groups ?? [])
    for (const s of ["queued", "running", "paused", "completed", "error", "cancelled"] as const)
      expect(g[s], `${g.groupId} ${s}`).toBe(
        full.find((f) => f.groupId === g.groupId && f.status === s)?.n ?? 0,
      );
}
