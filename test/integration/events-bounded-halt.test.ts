/**
 * A halt's events stay bounded (issue 33), as a Stop's do: when a run's limit un-runs more
 * than CELL_EVENTS_UP_TO queued cells, the run's `halted` event carries their number
 * (`unstamped`) instead of one `cell` event per cell; the attempt's own cell keeps its
 * event, and a halt of a few cells keeps a `cell` event each. Reads show the cells un-run.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import { stampRun } from "@/engine/dispatcher";
import { haltForLimit } from "@/store/dispatches/halt";
import { claimNext } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { cellCounts } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

/** The events written after `after`, leaving out `progress` (the counters' fold, on its own time). */
async function eventsAfter(
  tableId: string,
  after: number,
): Promise<{ kind: string; data: Record<string, unknown> }[]> {
  return queryRows(
    db(),
    sql`select kind::text, data from events
         where table_id = ${tableId} and id > ${after} and kind <> 'progress' order by id`,
  );
}

async function lastEventId(tableId: string): Promise<number> {
  const [r] = await queryRows<{ id: number | null }>(
    db(),
    sql`select max(id)::int as id from events where table_id = ${tableId}`,
  );
  return r?.id ?? 0;
}

/** A run over every row, stamped in this process and not launched; its first cell claimed. */
async function runWithOneClaimed(rows: number) {
  const table = await waitTable(key, { groups: 1, ms: 0, rows, waitOnly: true });
  const run = await stampRun(
    { db: db(), pause: async () => {} },
    {
      tableId: table.id,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 5,
      syncRows: 10_000,
    },
  );
  const rowId = table.rowIds[0] ?? "";
  const claimed = await claimNext(db(), { tableId: table.id, rowId, groupId: "g0" });
  if (!claimed) throw new Error("the first cell was not claimed");
  return { table, run, claimed: { ...claimed, rowId } };
}

/** Halts the run as its claimed cell's attempt does when it hits the month's credits. */
function haltOwnRun(at: Awaited<ReturnType<typeof runWithOneClaimed>>) {
  return haltForLimit(db(), {
    dispatchId: at.run.dispatchId,
    tableId: at.table.id,
    own: {
      rowId: at.claimed.rowId,
      groupId: "g0",
      executionId: at.claimed.executionId,
      attempt: at.claimed.attempt,
    },
  });
}

describe("a halt's events", () => {
  it(`a halt that un-runs more than ${CELL_EVENTS_UP_TO} queued cells writes one halted event with their number`, async () => {
    const { table, run, claimed } = await runWithOneClaimed(120);
    const after = await lastEventId(table.id);
    const halted = await haltOwnRun({ table, run, claimed });
    expect(halted).toEqual({ halted: true, unstamped: 119 });
    const written = await eventsAfter(table.id, after);
    // Before: 120 `cell` events (one per un-run cell), the limit and the run's end.
    expect(written).toEqual([
      {
        kind: "cell",
        data: expect.objectContaining({ rowId: claimed.rowId, groupId: "g0", status: null }),
      },
      { kind: "limit", data: expect.objectContaining({ dispatchId: run.dispatchId }) },
      {
        kind: "dispatch",
        data: { dispatchId: run.dispatchId, status: "halted", unstamped: 119 },
      },
    ]);
    // What a reader refetches on that event: nothing of the run is left.
    expect(await cellCounts(table.id)).toEqual({});
  }, 60_000);

  it(`a halt of at most ${CELL_EVENTS_UP_TO} cells keeps a cell event each and no count`, async () => {
    const { table, run, claimed } = await runWithOneClaimed(4);
    const after = await lastEventId(table.id);
    const halted = await haltOwnRun({ table, run, claimed });
    expect(halted).toEqual({ halted: true, unstamped: 3 });
    const written = await eventsAfter(table.id, after);
    expect(written.filter((e) => e.kind === "cell").map((e) => e.data.status)).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(written.filter((e) => e.kind === "dispatch")).toEqual([
      { kind: "dispatch", data: { dispatchId: run.dispatchId, status: "halted" } },
    ]);
    expect(await cellCounts(table.id)).toEqual({});
  }, 60_000);
});
