/**
 * The re-drive tells a row waiting for its carrier from an orphan: a queued cell is stale
 * only once both its stamp and its row's hand-out are older than the grace (the window
 * step ages its cursor on the dispatch, migration 0017), and only on what is true when
 * the pass looks at the row, not on the candidates' snapshot. A pass that only slid a
 * window healed nothing. Jobs are recorded, never run, unless a test runs a carrier
 * itself; time is moved by moving the stamps and the dispatch's record back in SQL.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import type { Pause } from "@/engine/race-points";
import { healedSomething, redriveOrphans } from "@/engine/redrive";
import { acquireRowLock } from "@/engine/row-lock";
import { advanceDispatch } from "@/store/dispatches/advance";
import { apiClient } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps, redriveEngine, resourcesOf } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

const tables: string[] = [];

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

// A pass looks at every table: each test's leftovers out of the next one's way.
afterEach(async () => {
  for (const id of tables.splice(0))
    await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id } },
      body: {},
    });
});

/** A run over a fresh table, its carrier jobs recorded and never run. */
async function run(rows: number, window: number) {
  const t = await waitTable(key, { groups: 1, ms: 0, rows });
  tables.push(t.id);
  const backend = new RecordingBackend();
  const { dispatchId } = await startRun(
    { db: db(), backend },
    {
      tableId: t.id,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      limit: null,
      window,
    },
  );
  return { ...t, dispatchId, backend };
}

/** The cells were stamped a minute ago (a large run stamps every row up front). */
const stampedLongAgo = (tableId: string) =>
  db().execute(
    sql`update cells set queued_at = now() - interval '1 minute' where table_id = ${tableId}`,
  );

/** The window's last record of its cursor is a minute old: what it covers was handed out then. */
const recordLongAgo = (dispatchId: string) =>
  db().execute(
    sql`update dispatches set prev_cursor_at = prev_cursor_at - interval '1 minute' where id = ${dispatchId}`,
  );

/** A cell finished as its carrier would, without the window step its release would take. */
const finishCell = (rowId: string) =>
  db().execute(
    sql`update cells set status = 'completed', finished_at = now(), updated_at = now()
         where row_id = ${rowId} and status = 'queued'`,
  );

async function pass(pause?: Pause) {
  const backend = new RecordingBackend();
  const report = await redriveOrphans(
    redriveEngine({ database: getDatabase(), backend, log: log(), pause }),
  );
  return { report, backend };
}

async function status(rowId: string): Promise<string | undefined> {
  const [c] = await queryRows<{ status: string }>(
    db(),
    sql`select status::text as status from cells where row_id = ${rowId}`,
  );
  return c?.status;
}

describe("a row waiting for its carrier is not an orphan", () => {
  it("a row handed out just now gets no carrier from a pass, however long ago its cells were stamped", async () => {
    const t = await run(1, 1);
    const rowId = t.rowIds[0] as string;
    expect(t.backend.carriersFor(rowId)).toBe(1); // its carrier is on its way
    await stampedLongAgo(t.id);
    const { report, backend } = await pass();
    expect(backend.carriersFor(rowId)).toBe(0);
    expect(report).toMatchObject({ queuedRows: 0, carriers: 0 });
    expect(await status(rowId)).toBe("queued");
  });

  it("a row handed out longer than the grace ago whose carrier never came gets one", async () => {
    const t = await run(1, 1);
    const rowId = t.rowIds[0] as string;
    await stampedLongAgo(t.id);
    await recordLongAgo(t.dispatchId);
    const { report, backend } = await pass();
    expect(backend.carriersFor(rowId)).toBe(1);
    expect(report).toMatchObject({ queuedRows: 1, requeued: 0, carriers: 1 });
    expect(healedSomething(report)).toBe(true);
  });

  it("a row the window hands out after its last record waits a grace from then, not from the record", async () => {
    const t = await run(2, 1);
    const [first, second] = t.rowIds as [string, string];
    await stampedLongAgo(t.id);
    await recordLongAgo(t.dispatchId);
    // The first row's carrier finishes it a minute after its hand-out and takes the
    // second row: that step finds a record a grace old and takes a new one.
    await finishCell(first);
    expect((await advanceDispatch(db(), t.dispatchId)).rowIds).toEqual([second]);
    expect((await pass()).backend.carriersFor(second)).toBe(0);
    await recordLongAgo(t.dispatchId);
    expect((await pass()).backend.carriersFor(second)).toBe(1);
  });

  it("a run whose cursor stopped after a hand-out its last record missed still ages: the pass's own step records it", async () => {
    const t = await run(3, 2);
    const [first, second, third] = t.rowIds as [string, string, string];
    await stampedLongAgo(t.id);
    // The first row finishes within the grace of the record and the third is handed out
    // without a new one; then every carrier of the window is lost and nothing moves.
    await finishCell(first);
    expect((await advanceDispatch(db(), t.dispatchId)).rowIds).toEqual([third]);
    await recordLongAgo(t.dispatchId);
    const before = await pass();
    expect(before.backend.carriersFor(second)).toBe(1); // covered by the record
    expect(before.backend.carriersFor(third)).toBe(0); // handed out after it
    // That pass's window step (nothing to hand out) took the record the third row needed.
    await recordLongAgo(t.dispatchId);
    expect((await pass()).backend.carriersFor(third)).toBe(1);
  });

  it("a stale row whose lock a live carrier holds gets no carrier", async () => {
    const t = await run(1, 1);
    const rowId = t.rowIds[0] as string;
    await stampedLongAgo(t.id);
    await recordLongAgo(t.dispatchId);
    const session = await acquireRowLock(resourcesOf(getDatabase()), t.id, rowId);
    expect(session).not.toBeNull();
    try {
      const { report, backend } = await pass();
      expect(backend.carriersFor(rowId)).toBe(0);
      expect(report.queuedRows).toBe(0);
    } finally {
      await session?.release();
    }
  });
});

describe("a pass judges a candidate on fresh state", () => {
  it("a candidate whose carrier finished the row between the candidate read and the pass's look gets no carrier", async () => {
    const t = await run(1, 1);
    const rowId = t.rowIds[0] as string;
    await stampedLongAgo(t.id);
    await recordLongAgo(t.dispatchId);
    // The row's own carrier, late but alive, runs the row while the pass holds the
    // candidate it read before; the row lock must be free for it (the pass does not
    // take it for a row with only queued cells).
    let outcome: string | undefined;
    const late: Pause = async (point, detail) => {
      if (point !== "redrive:row" || detail?.rowId !== rowId) return;
      outcome = await runCarrier(
        engineDeps({ backend: new RecordingBackend() }),
        { tableId: t.id, rowId, dispatchId: t.dispatchId },
        taskContext(),
      );
    };
    const { report, backend } = await pass(late);
    expect(outcome).toBe("done");
    expect(await status(rowId)).toBe("completed");
    expect(backend.carriersFor(rowId)).toBe(0);
    expect(report).toMatchObject({ queuedRows: 0, carriers: 0 });
  });

  it("a candidate whose cells a Stop took after the candidate read gets no carrier", async () => {
    const t = await run(2, 2);
    const [stopped, other] = t.rowIds as [string, string];
    await stampedLongAgo(t.id);
    await recordLongAgo(t.dispatchId);
    // A Stop takes no row lock: it can land between the read and the look at any time.
    const stop: Pause = async (point, detail) => {
      if (point === "redrive:row" && detail?.rowId === stopped)
        await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
          params: { path: { id: t.id } },
          body: { rowIds: [stopped] },
        });
    };
    const { report, backend } = await pass(stop);
    expect(await status(stopped)).toBe("cancelled");
    expect(backend.carriersFor(stopped)).toBe(0);
    expect(backend.carriersFor(other)).toBe(1);
    expect(report).toMatchObject({ queuedRows: 1, carriers: 1 });
  });
});

describe("the pass's report", () => {
  it("a pass that only slid a window healed nothing", async () => {
    const t = await run(2, 1);
    const [first, second] = t.rowIds as [string, string];
    // The first row finished, its carrier's own window step not taken yet: the pass
    // frees the slot first. That is no orphan.
    await finishCell(first);
    const { report, backend } = await pass();
    expect(report).toMatchObject({ handedOut: 1, carriers: 0, requeued: 0, queuedRows: 0 });
    expect(backend.carriersFor(second)).toBe(1);
    expect(healedSomething(report)).toBe(false);
  });
});
