/**
 * The Stop contract across the engine's multi-statement flows: a Stop holds whatever
 * point of a run, a cascade or a re-drive it lands on. Each test holds a flow at a race
 * point (injected, see src/engine/race-points.ts), makes the Stop or the other actor
 * act there, and releases it; no worker runs, the test carries the rows itself.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import { redriveOrphans } from "@/engine/redrive";
import { runStamper } from "@/engine/stamper";
import { stopRuns } from "@/engine/stop";
import { resumeCell } from "@/store/cells/resume";
import { pruneStops } from "@/store/stops/prune";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps, redriveEngine } from "../helpers/engine";
import { onPoint, RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";

let key: string;
const db = () => getDatabase().db;
const database = () => getDatabase();

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

async function workflow(expression: string, input?: string): Promise<string> {
  const res = await apiClient(key).POST("/api/workflows", {
    body: {
      name: "w",
      definition: {
        inputs: input ? [{ name: input, type: "json", required: true }] : [],
        blocks: [{ id: "out", type: "transform", expression }],
      },
    },
  });
  return dataOf(res).id;
}

interface GroupSpec {
  id: string;
  column: string;
  autoRun?: boolean;
  dependsOn?: string[];
  input?: string;
  /** The group waits for an approval before it writes "ok". */
  approval?: boolean;
}

async function table(groups: GroupSpec[], rows: Record<string, unknown>[]) {
  const wf = await workflow("'ok'");
  const fromInput = await workflow("inputs.v", "v");
  const approval = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: {
        name: "approval",
        definition: {
          blocks: [
            { id: "ask", type: "approval", prompt: "ok?", next: "out" },
            { id: "out", type: "transform", expression: "'ok'" },
          ],
        },
      },
    }),
  ).id;
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "stops",
      columns: [
        { id: "n", name: "N", type: "json" },
        ...groups.map((g) => ({
          id: g.column,
          name: g.column.toUpperCase(),
          type: "json" as const,
        })),
      ],
      groups: groups.map((g) => ({
        id: g.id,
        name: g.id,
        kind: "workflow" as const,
        workflowId: g.approval ? approval : g.input ? fromInput : wf,
        inputs: g.input ? { v: g.input } : ({} as Record<string, string>),
        outputs: [{ columnId: g.column, from: "out" }],
        autoRun: g.autoRun ?? false,
        dependsOn: g.dependsOn ?? [],
      })),
    },
  });
  expect(t.response.status).toBe(201);
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(t).id } },
    body: { rows: rows.map((data) => ({ data })) },
  });
  return { tableId: dataOf(t).id, rowIds: dataOf(ins).rows.map((r) => r.id) };
}

async function cellsOf(tableId: string) {
  return queryRows<{ rowId: string; groupId: string; status: string; dispatchId: string | null }>(
    db(),
    sql`select row_id as "rowId", group_id as "groupId", status::text as status, dispatch_id as "dispatchId"
          from cells where table_id = ${tableId} order by row_position, group_id`,
  );
}

async function dispatchStatus(id: string): Promise<string | undefined> {
  const [d] = await queryRows<{ status: string }>(
    db(),
    sql`select status::text as status from dispatches where id = ${id}`,
  );
  return d?.status;
}

const inFlight = (s: string) => s === "queued" || s === "running";

/** Runs what the engine enqueued (carriers, the stamper) as a worker would, until nothing is left. */
async function drain(backend: RecordingBackend): Promise<void> {
  for (let jobs = backend.take(); jobs.length > 0; jobs = backend.take())
    for (const job of jobs)
      if (job.task === "row-carrier")
        await runCarrier(engineDeps({ database: database(), backend }), job.payload, taskContext());
      else if (job.task === "stamp-dispatch")
        await runStamper({ database: getDatabase(), backend }, job.payload, taskContext(), {
          pageRows: 5,
        });
}

/** Resumes the row's paused cell of `groupId` (an approval) and carries the row. */
async function approve(tableId: string, rowId: string, groupId: string): Promise<void> {
  const [cell] = await queryRows<{ executionId: string }>(
    db(),
    sql`select execution_id as "executionId" from cells
         where row_id = ${rowId} and group_id = ${groupId} and status = 'paused'`,
  );
  if (!cell) throw new Error(`no paused cell of ${groupId}`);
  const resumed = await resumeCell(db(), {
    tableId,
    rowId,
    groupId,
    executionId: cell.executionId,
    data: { approval: true },
  });
  expect(resumed).toEqual({ ok: true });
  const backend = new RecordingBackend();
  await runCarrier(
    engineDeps({ database: database(), backend }),
    { tableId, rowId },
    taskContext(),
  );
  await drain(backend);
}

describe("a Stop while a run is still stamping", () => {
  it("a Stop of the table between two pages ends the run: no page after it stamps", async () => {
    const { tableId } = await table([{ id: "g", column: "a" }], Array(50).fill({}));
    const backend = new RecordingBackend();
    const run = await startRun(
      {
        db: db(),
        backend,
        pause: onPoint("run:page", 3, () => stopRuns({ db: db(), backend }, { tableId })),
      },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 5, pageRows: 10 },
    );
    const cells = await cellsOf(tableId);
    expect(cells.filter((c) => inFlight(c.status))).toEqual([]);
    // The two pages before the Stop were stamped and cancelled; nothing after them.
    expect(cells).toHaveLength(20);
    expect(run.stamping).toBe(false);
    expect(await dispatchStatus(run.dispatchId)).toBe("cancelled");
    expect(backend.jobs.filter((j) => j.task === "row-carrier")).toEqual([]);
  });

  it("a Stop of some rows leaves them out of the pages after it, and the run goes on", async () => {
    const { tableId, rowIds } = await table([{ id: "g", column: "a" }], Array(30).fill({}));
    // Rows of the stamped page and of pages not stamped yet.
    const stopped = [rowIds[2], rowIds[15], rowIds[27]] as string[];
    const backend = new RecordingBackend();
    const run = await startRun(
      {
        db: db(),
        backend,
        pause: onPoint("run:page", 2, () =>
          stopRuns({ db: db(), backend }, { tableId, rowIds: stopped }),
        ),
      },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 5, pageRows: 10 },
    );
    const cells = await cellsOf(tableId);
    const byRow = new Map(cells.map((c) => [c.rowId, c.status]));
    expect(byRow.get(stopped[0] as string)).toBe("cancelled");
    expect(byRow.has(stopped[1] as string)).toBe(false);
    expect(byRow.has(stopped[2] as string)).toBe(false);
    expect(cells.filter((c) => c.status === "queued")).toHaveLength(27);
    expect(await dispatchStatus(run.dispatchId)).toBe("active");
  });

  it("a Stop of one group leaves that group out of the pages after it", async () => {
    const { tableId } = await table(
      [
        { id: "g1", column: "a" },
        { id: "g2", column: "b" },
      ],
      Array(20).fill({}),
    );
    const backend = new RecordingBackend();
    await startRun(
      {
        db: db(),
        backend,
        pause: onPoint("run:page", 2, () =>
          stopRuns({ db: db(), backend }, { tableId, groupIds: ["g1"] }),
        ),
      },
      {
        tableId,
        groupIds: ["g1", "g2"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 5,
        pageRows: 5,
      },
    );
    const cells = await cellsOf(tableId);
    const g1 = cells.filter((c) => c.groupId === "g1");
    expect(g1.map((c) => c.status)).toEqual(Array(5).fill("cancelled"));
    expect(cells.filter((c) => c.groupId === "g2" && c.status === "queued")).toHaveLength(20);
  });

  it("a re-drive pass before the first page does not complete the run (its window holds)", async () => {
    const { tableId } = await table([{ id: "g", column: "a" }], Array(12).fill({}));
    const backend = new RecordingBackend();
    let seenStatus: string | undefined;
    const run = await startRun(
      {
        db: db(),
        backend,
        pause: onPoint("run:created", 1, async () => {
          await redriveOrphans(redriveEngine({ database: database(), backend, log: log() }));
          const [d] = await queryRows<{ id: string }>(
            db(),
            sql`select id from dispatches where table_id = ${tableId}`,
          );
          seenStatus = await dispatchStatus(d?.id ?? "");
        }),
      },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 3, pageRows: 5 },
    );
    expect(seenStatus).toBe("active");
    expect(await dispatchStatus(run.dispatchId)).toBe("active");
    // Only the window's rows were handed out; the rest wait for it, not for the re-drive.
    expect(backend.jobs.filter((j) => j.task === "row-carrier")).toHaveLength(3);
    const again = new RecordingBackend();
    await redriveOrphans(redriveEngine({ database: database(), backend: again, log: log() }));
    expect(again.jobs.filter((j) => j.task === "row-carrier")).toHaveLength(0);
  });
});

describe("a Stop ends the auto-run cascade", () => {
  const chain: GroupSpec[] = [
    { id: "ga", column: "a", autoRun: true, dependsOn: ["n"], input: "n" },
    { id: "gb", column: "b", autoRun: true, dependsOn: ["a"], input: "a" },
  ];

  it("a Stop landing between a finished group and the next auto-run stamp holds", async () => {
    const { tableId, rowIds } = await table(chain, [{ n: 1 }]);
    const rowId = rowIds[0] as string;
    const backend = new RecordingBackend();
    const [fired] = await cellsOf(tableId);
    expect(fired).toMatchObject({ groupId: "ga", status: "queued" });
    await runCarrier(
      engineDeps({
        database: database(),
        backend,
        pause: onPoint("carrier:auto", 1, () => stopRuns({ db: db(), backend }, { tableId })),
      }),
      { tableId, rowId, dispatchId: fired?.dispatchId ?? undefined },
      taskContext(),
    );
    expect((await cellsOf(tableId)).map((c) => [c.groupId, c.status])).toEqual([
      ["ga", "completed"],
    ]);
    // A carrier that comes later (a job enqueued before the Stop) does not fire it either.
    await runCarrier(
      engineDeps({ database: database(), backend }),
      { tableId, rowId },
      taskContext(),
    );
    expect((await cellsOf(tableId)).map((c) => c.groupId)).toEqual(["ga"]);
  });

  it("after a Stop, something new on the row (a run request, an edit) starts the cascade again", async () => {
    const { tableId, rowIds } = await table(chain, [{ n: 1 }, { n: 2 }]);
    const [r1, r2] = rowIds as [string, string];
    await stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId });
    expect((await cellsOf(tableId)).map((c) => c.status)).toEqual(["cancelled", "cancelled"]);
    // A run request of ga on r1: once it completes, gb fires by itself on r1.
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["ga"],
        mode: "all",
        rowIds: [r1],
        limit: null,
        window: 5,
      },
    );
    await runCarrier(
      engineDeps({ database: database(), backend }),
      { tableId, rowId: r1 },
      taskContext(),
    );
    const after = await cellsOf(tableId);
    expect(after.filter((c) => c.rowId === r1).map((c) => [c.groupId, c.status])).toEqual([
      ["ga", "completed"],
      ["gb", "completed"],
    ]);
    // An edit of r2's input re-arms ga there (a new run request of its own).
    const edit = await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId: r2 } },
      body: { data: { n: 5 } },
    });
    expect(edit.response.status).toBe(200);
    const r2Cells = (await cellsOf(tableId)).filter((c) => c.rowId === r2);
    expect(r2Cells.map((c) => [c.groupId, c.status])).toEqual([["ga", "queued"]]);
  });

  it("a Stop of another group does not hold this cascade", async () => {
    const { tableId, rowIds } = await table([...chain, { id: "gx", column: "x" }], [{ n: 1 }]);
    const rowId = rowIds[0] as string;
    const backend = new RecordingBackend();
    await runCarrier(
      engineDeps({
        database: database(),
        backend,
        pause: onPoint("carrier:auto", 1, () =>
          stopRuns({ db: db(), backend }, { tableId, groupIds: ["gx"] }),
        ),
      }),
      { tableId, rowId },
      taskContext(),
    );
    expect((await cellsOf(tableId)).map((c) => [c.groupId, c.status])).toEqual([
      ["ga", "completed"],
      ["gb", "completed"],
    ]);
  });

  it("a Stop of the auto-run group holds on rows its upstream's run stamps after the Stop (issue 29, item 2)", async () => {
    // ga manual, gb auto-run on ga's output; a run of ga stamps 10 rows before it returns
    // and the other 20 in the background, after the Stop of gb.
    const { tableId } = await table(
      [
        { id: "ga", column: "a" },
        { id: "gb", column: "b", autoRun: true, dependsOn: ["a"], input: "a" },
      ],
      Array(30).fill({}),
    );
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["ga"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 5,
        pageRows: 5,
        syncRows: 10,
      },
    );
    expect(run).toMatchObject({ stamped: 10, stamping: true });
    await stopRuns({ db: db(), backend }, { tableId, groupIds: ["gb"] });
    await drain(backend);
    const cells = await cellsOf(tableId);
    // ga ran on every row, its later pages included; gb on none.
    expect(cells.filter((c) => c.groupId === "ga" && c.status === "completed")).toHaveLength(30);
    expect(cells.filter((c) => c.groupId === "gb")).toEqual([]);
    expect(await dispatchStatus(run.dispatchId)).toBe("completed");
  });

  it("a request after the Stop lifts its hold on the row even when an older run re-stamps the cell", async () => {
    const { tableId, rowIds } = await table(
      [
        { id: "ga", column: "a" },
        { id: "gb", column: "b", autoRun: true, dependsOn: ["a"], input: "a" },
      ],
      Array(10).fill({}),
    );
    const row7 = rowIds[7] as string;
    const backend = new RecordingBackend();
    const scope = { tableId, groupIds: ["ga"], mode: "all" as const, limit: null, window: 5 };
    await startRun({ db: db(), backend }, { ...scope, rowIds: null, pageRows: 5, syncRows: 5 });
    await stopRuns({ db: db(), backend }, { tableId, groupIds: ["gb"] });
    // A run of ga on row 7 made after the Stop; then the older run's background page
    // stamps row 7 again (mode all): the row keeps the newer request.
    await startRun({ db: db(), backend }, { ...scope, rowIds: [row7] });
    await drain(backend);
    const gb = (await cellsOf(tableId)).filter((c) => c.groupId === "gb");
    expect(gb.map((c) => [c.rowId, c.status])).toEqual([[row7, "completed"]]);
  });

  it("a run request after a Stop lifts its hold even once the request's cell was resumed (item 10)", async () => {
    const { tableId, rowIds } = await table(
      [
        { id: "gp", column: "p", approval: true },
        { id: "gb", column: "b", autoRun: true, dependsOn: ["p"], input: "p" },
      ],
      [{}],
    );
    const rowId = rowIds[0] as string;
    await stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId });
    // A run of gp made after the Stop: it pauses for its approval, and the resume takes
    // the cell out of the run.
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["gp"],
        mode: "all",
        rowIds: [rowId],
        limit: null,
        window: 5,
      },
    );
    await drain(backend);
    expect((await cellsOf(tableId)).map((c) => [c.groupId, c.status])).toEqual([["gp", "paused"]]);
    await approve(tableId, rowId, "gp");
    expect((await cellsOf(tableId)).map((c) => [c.groupId, c.status])).toEqual([
      ["gb", "completed"],
      ["gp", "completed"],
    ]);
  });
});

describe("a Stop record is kept while anything it could hold remains (item 3)", () => {
  const approvalChain: GroupSpec[] = [
    { id: "gp", column: "p", approval: true },
    { id: "gb", column: "b", autoRun: true, dependsOn: ["p"], input: "p" },
  ];
  const age = (tableId: string, what: "stops" | "cells") =>
    db().execute(
      what === "stops"
        ? sql`update stops set created_at = now() - interval '25 hours' where table_id = ${tableId}`
        : sql`update cells set updated_at = now() - interval '25 hours' where table_id = ${tableId}`,
    );
  const stopsOf = async (tableId: string) =>
    (
      await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from stops where table_id = ${tableId}`,
      )
    )[0]?.n;

  it("a 25-hour-old Stop over a paused approval still holds once the approval is given", async () => {
    const { tableId, rowIds } = await table(approvalChain, [{}]);
    const rowId = rowIds[0] as string;
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["gp"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 5,
      },
    );
    await drain(backend);
    await stopRuns({ db: db(), backend }, { tableId, groupIds: ["gb"] });
    await age(tableId, "stops");
    await age(tableId, "cells");
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(1);
    // The approval comes the next day: gp completes, gb stays held.
    await approve(tableId, rowId, "gp");
    expect((await cellsOf(tableId)).map((c) => [c.groupId, c.status])).toEqual([
      ["gp", "completed"],
    ]);
    // Its carrier may still be on the row for a while: kept; a day later, nothing is left.
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(1);
    await age(tableId, "cells");
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(0);
  });

  it("a Stop older than a day is kept while a run made before it is active, and pruned after", async () => {
    const { tableId } = await table(approvalChain, Array(4).fill({}));
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["gp"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 5,
        pageRows: 2,
        syncRows: 2,
      },
    );
    expect(run.stamping).toBe(true);
    await stopRuns({ db: db(), backend }, { tableId, groupIds: ["gb"] });
    await age(tableId, "stops");
    await age(tableId, "cells");
    // The run is still stamping (and its cells are queued): kept.
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(1);
    // Its cells all pause, the run completes; the paused cells still keep the record.
    await drain(backend);
    expect(await dispatchStatus(run.dispatchId)).toBe("completed");
    await age(tableId, "cells");
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(1);
    // A Stop of the table cancels them: nothing older is left to hold.
    await stopRuns({ db: db(), backend }, { tableId });
    await age(tableId, "stops");
    await age(tableId, "cells");
    await pruneStops(db());
    expect(await stopsOf(tableId)).toBe(0);
  });
});
