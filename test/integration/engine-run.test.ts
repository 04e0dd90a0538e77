import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";

let key: string;
let tableId: string;
beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  const wf = await call<{ id: string }>("POST", "/api/workflows", {
    key,
    body: { name: "C", definition: classifyDefinition },
  });
  const label = await call<{ id: string }>("POST", "/api/workflows", {
    key,
    body: {
      name: "Label",
      definition: {
        inputs: [{ name: "size", type: "text", required: true }],
        blocks: [{ id: "label", type: "transform", expression: "'size:' & inputs.size" }],
      },
    },
  });
  const t = await call<{ id: string }>("POST", "/api/tables", {
    key,
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
          workflowId: wf.body.id,
          inputs: { n: "n" },
          outputs: [{ columnId: "size", from: "result" }],
        },
        {
          id: "labeller",
          name: "Label",
          kind: "workflow",
          workflowId: label.body.id,
          inputs: { size: "size" },
          outputs: [{ columnId: "label", from: "label" }],
        },
      ],
    },
  });
  tableId = t.body.id;
});

describe("a run", () => {
  it("runs 200 rows × 2 chained groups to completion, in dependency order", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ data: { n: i } }));
    await call("POST", `/api/tables/${tableId}/rows`, { key, body: { rows } });
    // Groups listed downstream-first: the carrier must still run classify before labeller.
    const run = await call<{ dispatchId: string; stamped: number }>(
      "POST",
      `/api/tables/${tableId}/runs`,
      {
        key,
        body: { mode: "all", groupIds: ["labeller", "classify"] },
      },
    );
    expect(run.status).toBe(202);
    expect(run.body.stamped).toBe(400);
    expect(await waitForDispatch(key, tableId, run.body.dispatchId)).toBe("completed");
    const view = await call<{ counts: Record<string, number> }>(
      "GET",
      `/api/tables/${tableId}/runs/${run.body.dispatchId}`,
      { key },
    );
    expect(view.body.counts).toMatchObject({ completed: 400, queued: 0, running: 0, error: 0 });
    const list = await call<{ rows: { data: Record<string, unknown> }[] }>(
      "GET",
      `/api/tables/${tableId}/rows?limit=1000`,
      { key },
    );
    for (const r of list.body.rows) {
      const n = r.data.n as number;
      const size = n * 2 > 10 ? "big" : "small";
      expect(r.data).toEqual({ n, size, label: `size:${size}` });
    }
  });

  it("mode new stamps nothing already run; incomplete re-runs only errors and cancels", async () => {
    const again = await call<{ dispatchId: string; stamped: number }>(
      "POST",
      `/api/tables/${tableId}/runs`,
      {
        key,
        body: { mode: "new" },
      },
    );
    expect(again.body.stamped).toBe(0);
    expect(await waitForDispatch(key, tableId, again.body.dispatchId)).toBe("completed");
    const inc = await call<{ stamped: number }>("POST", `/api/tables/${tableId}/runs`, {
      key,
      body: { mode: "incomplete" },
    });
    expect(inc.body.stamped).toBe(0);
  });

  it("limit caps the rows, rowIds scope them", async () => {
    const rows = await call<{ rows: { id: string }[] }>(
      "GET",
      `/api/tables/${tableId}/rows?limit=5`,
      { key },
    );
    const ids = rows.body.rows.map((r) => r.id);
    const scoped = await call<{ dispatchId: string; stamped: number }>(
      "POST",
      `/api/tables/${tableId}/runs`,
      {
        key,
        body: { mode: "all", groupIds: ["classify"], rowIds: ids.slice(0, 3) },
      },
    );
    expect(scoped.body.stamped).toBe(3);
    const limited = await call<{ dispatchId: string; stamped: number }>(
      "POST",
      `/api/tables/${tableId}/runs`,
      {
        key,
        body: { mode: "all", groupIds: ["classify"], limit: 7 },
      },
    );
    expect(limited.body.stamped).toBe(7);
    await waitForDispatch(key, tableId, scoped.body.dispatchId);
    await waitForDispatch(key, tableId, limited.body.dispatchId);
    expect(await cellCounts(tableId)).toEqual({ completed: 400 });
  });

  it("a required input that is empty completes the cell as skipped and blanks its outputs", async () => {
    const ins = await call<{ rows: { id: string }[] }>("POST", `/api/tables/${tableId}/rows`, {
      key,
      body: { rows: [{ data: { size: "stale", label: "old" } }] },
    });
    const rowId = ins.body.rows[0]?.id as string;
    const run = await call<{ dispatchId: string }>("POST", `/api/tables/${tableId}/runs`, {
      key,
      body: { mode: "all", rowIds: [rowId], groupIds: ["classify"] },
    });
    await waitForDispatch(key, tableId, run.body.dispatchId);
    const row = await call<{
      data: Record<string, unknown>;
      cells: Record<string, { status: string; outcome: string }>;
    }>("GET", `/api/tables/${tableId}/rows/${rowId}`, { key });
    expect(row.body.cells.classify).toMatchObject({ status: "completed", outcome: "skipped" });
    expect(row.body.data).toEqual({ label: "old" });
  });

  it("runs API: unknown group → 400, foreign table → 404, list shows runs", async () => {
    expect(
      (
        await call("POST", `/api/tables/${tableId}/runs`, {
          key,
          body: { mode: "all", groupIds: ["nope"] },
        })
      ).status,
    ).toBe(400);
    const other = await newWorkspace("other");
    expect(
      (await call("POST", `/api/tables/${tableId}/runs`, { key: other.key, body: { mode: "all" } }))
        .status,
    ).toBe(404);
    expect(
      (await call("POST", `/api/tables/${tableId}/runs/cancel`, { key: other.key })).status,
    ).toBe(404);
    const list = await call<{ runs: unknown[] }>("GET", `/api/tables/${tableId}/runs`, { key });
    expect(list.body.runs.length).toBeGreaterThanOrEqual(4);
  });
});

describe("mode failed", () => {
  it("re-runs only cells whose last attempt ended in error: not cancelled, completed or un-run ones", async () => {
    const wf = async (blocks: unknown[]) =>
      (
        await call<{ id: string }>("POST", "/api/workflows", {
          key,
          body: { name: "w", definition: { blocks } },
        })
      ).body.id;
    const ok = await wf([{ id: "v", type: "transform", expression: "1" }]);
    const bad = await wf([{ id: "v", type: "fail", message: "nope" }]);
    const t = await call<{ id: string }>("POST", "/api/tables", {
      key,
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
    const id = t.body.id;
    const rows = () =>
      call("POST", `/api/tables/${id}/rows`, { key, body: { rows: [{ data: {} }] } });
    for (let i = 0; i < 4; i++) await rows();
    const first = await call<{ dispatchId: string }>("POST", `/api/tables/${id}/runs`, {
      key,
      body: { mode: "all" },
    });
    expect(await waitForDispatch(key, id, first.body.dispatchId)).toBe("completed");
    expect(await cellCounts(id)).toEqual({ completed: 4, error: 4 });
    // One failed cell was since stopped (its last attempt: cancelled), and a row is new.
    await getDatabase().db.execute(
      sql`update cells set status = 'cancelled' where table_id = ${id} and group_id = 'bad'
            and row_id = (select min(row_id) from cells where table_id = ${id})`,
    );
    await rows();
    const failed = await call<{ dispatchId: string; stamped: number }>(
      "POST",
      `/api/tables/${id}/runs`,
      { key, body: { mode: "failed" } },
    );
    expect(failed.status).toBe(202);
    expect(failed.body.stamped).toBe(3);
    expect(await waitForDispatch(key, id, failed.body.dispatchId)).toBe("completed");
    // The three ran again (and failed again); nothing else was touched.
    expect(await cellCounts(id)).toEqual({ completed: 4, error: 3, cancelled: 1 });
    const [again] = await queryRows<{ n: number }>(
      getDatabase().db,
      sql`select count(*)::int as n from cells
           where table_id = ${id} and dispatch_id = ${failed.body.dispatchId} and group_id = 'bad'`,
    );
    expect(again?.n).toBe(3);
  });
});
