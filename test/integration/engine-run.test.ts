import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";

let key: string;
let tableId: string;
beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  const wf = await apiClient(key).POST("/api/workflows", {
    body: { name: "C", definition: classifyDefinition },
  });
  const label = await apiClient(key).POST("/api/workflows", {
    body: {
      name: "Label",
      definition: {
        inputs: [{ name: "size", type: "text", required: true }],
        blocks: [{ id: "label", type: "transform", expression: "'size:' & inputs.size" }],
      },
    },
  });
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "Numbers",
      columns: [
        { id: "n", name: "N", type: "number" },
        { id: "size", name: "Size", type: "text" },
        { id: "label", name: "Label", type: "text" },
      ],
      groups: [
        {
          id: "classify",
          name: "Classify",
          kind: "workflow",
          workflowId: dataOf(wf).id,
          inputs: { n: "n" },
          outputs: [{ columnId: "size", from: "result" }],
        },
        {
          id: "labeller",
          name: "Label",
          kind: "workflow",
          workflowId: dataOf(label).id,
          inputs: { size: "size" },
          outputs: [{ columnId: "label", from: "label" }],
        },
      ],
    },
  });
  tableId = dataOf(t).id;
});

describe("a run", () => {
  it("runs 200 rows × 2 chained groups to completion, in dependency order", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ data: { n: i } }));
    await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows },
    });
    // Groups listed downstream-first: the carrier must still run classify before labeller.
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", groupIds: ["labeller", "classify"] },
    });
    expect(run.response.status).toBe(202);
    expect(startedRun(run).stamped).toBe(400);
    expect(await waitForDispatch(key, tableId, startedRun(run).dispatchId)).toBe("completed");
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: startedRun(run).dispatchId } },
    });
    expect(dataOf(view).counts).toMatchObject({ completed: 400, queued: 0, running: 0, error: 0 });
    const list = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: { path: { id: tableId }, query: { limit: 1000 } },
    });
    for (const r of dataOf(list).rows) {
      const n = r.data.n as number;
      const size = n * 2 > 10 ? "big" : "small";
      expect(r.data).toEqual({ n, size, label: `size:${size}` });
    }
  });

  it("mode new stamps nothing already run; incomplete re-runs only errors and cancels", async () => {
    const again = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "new" },
    });
    expect(startedRun(again).stamped).toBe(0);
    expect(await waitForDispatch(key, tableId, startedRun(again).dispatchId)).toBe("completed");
    const inc = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "incomplete" },
    });
    expect(startedRun(inc).stamped).toBe(0);
  });

  it("limit caps the rows, rowIds scope them", async () => {
    const rows = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: { path: { id: tableId }, query: { limit: 5 } },
    });
    const ids = dataOf(rows).rows.map((r) => r.id);
    const scoped = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", groupIds: ["classify"], rowIds: ids.slice(0, 3) },
    });
    expect(startedRun(scoped).stamped).toBe(3);
    const limited = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", groupIds: ["classify"], limit: 7 },
    });
    expect(startedRun(limited).stamped).toBe(7);
    await waitForDispatch(key, tableId, startedRun(scoped).dispatchId);
    await waitForDispatch(key, tableId, startedRun(limited).dispatchId);
    expect(await cellCounts(tableId)).toEqual({ completed: 400 });
  });

  it("a required input that is empty completes the cell as skipped and blanks its outputs", async () => {
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { size: "stale", label: "old" } }] },
    });
    const rowId = dataOf(ins).rows[0]?.id as string;
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", rowIds: [rowId], groupIds: ["classify"] },
    });
    await waitForDispatch(key, tableId, startedRun(run).dispatchId);
    const row = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
    });
    expect(dataOf(row).cells.classify).toMatchObject({ status: "completed", outcome: "skipped" });
    expect(dataOf(row).data).toEqual({ label: "old" });
  });

  it("runs API: unknown group → 400, foreign table → 404, list shows runs", async () => {
    expect(
      (
        await apiClient(key).POST("/api/tables/{id}/runs", {
          params: { path: { id: tableId } },
          body: { mode: "all", groupIds: ["nope"] },
        })
      ).response.status,
    ).toBe(400);
    const other = await newWorkspace("other");
    expect(
      (
        await apiClient(other.key).POST("/api/tables/{id}/runs", {
          params: { path: { id: tableId } },
          body: { mode: "all" },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(other.key).POST("/api/tables/{id}/runs/cancel", {
          params: { path: { id: tableId } },
        })
      ).response.status,
    ).toBe(404);
    const list = await apiClient(key).GET("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).runs.length).toBeGreaterThanOrEqual(4);
  });
});

describe("mode failed", () => {
  it("re-runs only cells whose last attempt ended in error: not cancelled, completed or un-run ones", async () => {
    const wf = async (blocks: Schemas["Block"][]) =>
      dataOf(
        await apiClient(key).POST("/api/workflows", {
          body: { name: "w", definition: { blocks } },
        }),
      ).id;
    const ok = await wf([{ id: "v", type: "transform", expression: "1" }]);
    const bad = await wf([{ id: "v", type: "fail", message: "nope" }]);
    const t = await apiClient(key).POST("/api/tables", {
      body: {
        name: "failing",
        columns: [
          { id: "a", name: "A", type: "json" },
          { id: "b", name: "B", type: "json" },
        ],
        groups: [
          {
            id: "ok",
            name: "OK",
            kind: "workflow",
            workflowId: ok,
            outputs: [{ columnId: "a", from: "v" }],
          },
          {
            id: "bad",
            name: "Bad",
            kind: "workflow",
            workflowId: bad,
            outputs: [{ columnId: "b", from: "v" }],
          },
        ],
      },
    });
    const id = dataOf(t).id;
    const rows = () =>
      apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id } },
        body: { rows: [{ data: {} }] },
      });
    for (let i = 0; i < 4; i++) await rows();
    const first = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id } },
      body: { mode: "all" },
    });
    expect(await waitForDispatch(key, id, startedRun(first).dispatchId)).toBe("completed");
    expect(await cellCounts(id)).toEqual({ completed: 4, error: 4 });
    // One failed cell was since stopped (its last attempt: cancelled), and a row is new.
    await getDatabase().db.execute(
      sql`update cells set status = 'cancelled' where table_id = ${id} and group_id = 'bad'
            and row_id = (select min(row_id) from cells where table_id = ${id})`,
    );
    await rows();
    const failed = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id } },
      body: { mode: "failed" },
    });
    expect(failed.response.status).toBe(202);
    expect(startedRun(failed).stamped).toBe(3);
    expect(await waitForDispatch(key, id, startedRun(failed).dispatchId)).toBe("completed");
    // The three ran again (and failed again); nothing else was touched.
    expect(await cellCounts(id)).toEqual({ completed: 4, error: 3, cancelled: 1 });
    const [again] = await queryRows<{ n: number }>(
      getDatabase().db,
      sql`select count(*)::int as n from cells
           where table_id = ${id} and dispatch_id = ${startedRun(failed).dispatchId} and group_id = 'bad'`,
    );
    expect(again?.n).toBe(3);
  });
});
