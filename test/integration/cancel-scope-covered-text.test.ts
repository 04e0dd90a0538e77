/**
 * What a large Stop's cancel scope covers is one test written twice: the database's
 * `cellflow_covered` (reads, the count trigger, the rewrite) and `coveredText` (the
 * claim's and the lock batch's hot reads, written out for the planner). Invariant: for
 * every cell, under scopes of every shape (whole run, groups, rows, a `where`'s ranges,
 * and combinations), both give the same answer, so no path claims what reads call
 * cancelled, nor the reverse.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { stampRun } from "@/engine/dispatcher";
import { coveredText } from "@/store/sql";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

async function run(tableId: string): Promise<string> {
  const r = await stampRun(
    { db: db(), pause: async () => {} },
    {
      tableId,
      groupIds: ["g0", "g1"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 5,
      syncRows: 10_000,
    },
  );
  return r.dispatchId;
}

describe("a cancel scope's coverage", () => {
  it("the written-out test and cellflow_covered agree on every cell under scopes of every shape", async () => {
    const t = await waitTable(key, { groups: 2, ms: 0, rows: 6, waitOnly: true });
    const [r0 = "", r1 = "", , r3 = "", r4 = ""] = t.rowIds;
    const d1 = await run(t.id);
    const [stop] = await queryRows<{ seq: number }>(
      db(),
      sql`insert into stops (table_id) values (${t.id}) returning seq::int as seq`,
    );
    const seq = stop?.seq ?? 0;
    // The where matched r1, r3 and r4: two ranges, a row between them and one after.
    await db().execute(
      sql`insert into stop_ranges (seq, lo, hi)
          select ${seq}, min(position), max(position) from rows where id in (${r1}, ${r3}, ${r4})
           group by id = ${r1}`,
    );
    // Scopes of d1: one group on some rows; the other group on a where's rows.
    await db().execute(
      sql`insert into cancel_scopes (table_id, dispatch_id, group_ids, row_ids, stop_seq) values
            (${t.id}, ${d1}, array['g0'], array[${r0}, ${r1}], null),
            (${t.id}, ${d1}, array['g1'], null, ${seq})`,
    );
    const cases = await queryRows<{ row_id: string; group_id: string; fn: boolean; text: boolean }>(
      db(),
      sql`select c.row_id, c.group_id,
                 (c.dispatch_id is not null and cellflow_covered(c.dispatch_id, c.row_id, c.group_id)) as fn,
                 ${sql.raw(coveredText("c"))} as text
            from (select row_id, group_id, row_position, dispatch_id from cells where table_id = ${t.id}
                  union all
                  select row_id, group_id, row_position, null from cells where table_id = ${t.id}) c`,
    );
    expect(cases).toHaveLength(24);
    for (const c of cases) expect({ ...c, text: c.fn }).toEqual(c);
    const covered = cases.filter((c) => c.fn).map((c) => `${c.row_id}:${c.group_id}`);
    expect(covered.sort()).toEqual(
      [`${r0}:g0`, `${r1}:g0`, `${r1}:g1`, `${r3}:g1`, `${r4}:g1`].sort(),
    );
    // A whole-run scope covers every cell of the run, and only of the run.
    await db().execute(
      sql`insert into cancel_scopes (table_id, dispatch_id) values (${t.id}, ${d1})`,
    );
    const whole = await queryRows<{ fn: boolean; text: boolean; n: number }>(
      db(),
      sql`select (c.dispatch_id is not null and cellflow_covered(c.dispatch_id, c.row_id, c.group_id)) as fn,
                 ${sql.raw(coveredText("c"))} as text, count(*)::int as n
            from (select row_id, group_id, row_position, dispatch_id from cells where table_id = ${t.id}
                  union all
                  select row_id, group_id, row_position, 'no-such-run' from cells where table_id = ${t.id}) c
           group by 1, 2 order by 1`,
    );
    expect(whole).toEqual([
      { fn: false, text: false, n: 12 },
      { fn: true, text: true, n: 12 },
    ]);
  }, 60_000);
});
