/**
 * Sub-workflow runs with lineage: each `workflow` block call and each `foreach` item is a
 * child run with its own id, its parent, its status and output, listed with its attempt
 * in the cell's history; a Stop of the parent ends every running child at once, and they
 * read `cancelled`; a stale attempt cannot add children; children a crashed attempt left
 * running end when the next attempt starts.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CellAttemptsResponse } from "@/contracts/cells";
import { sweepChildRuns } from "@/store/child-runs/finish";
import { startChildRun } from "@/store/child-runs/start";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, runToEnd, useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

let key: string;
let ep: Endpoint;
const db = () => getDatabase().db;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  key = (await newWorkspace()).key;
  ep = await startEndpoint();
});
afterAll(() => ep.close());

async function workflow(blocks: unknown[], inputs: unknown[] = []): Promise<string> {
  return dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: { name: "child", definition: { inputs, blocks } as never },
    }),
  ).id;
}

async function attempts(tableId: string, rowId: string) {
  const res = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
    params: { path: { id: tableId, rowId, groupId: "g" } },
  });
  return CellAttemptsResponse.parse(dataOf(res)).attempts;
}

describe("child runs", () => {
  it("each workflow call and foreach item is a child with its id, parent, status and output", async () => {
    ep.on("/leaf", async (hit) =>
      hit.query.get("i") === "1"
        ? { status: 400, body: { no: 1 } }
        : { status: 200, body: { ok: true } },
    );
    const leaf = await workflow([
      { id: "get", type: "http", method: "GET", url: `${ep.url}/leaf?i={{ inputs.item }}` },
    ]);
    const middle = await workflow([
      { id: "inner", type: "workflow", workflowId: leaf, inputs: { item: "7" } },
    ]);
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          { id: "sub", type: "workflow", workflowId: middle, next: "each" },
          {
            id: "each",
            type: "foreach",
            items: "[0,1,2]",
            workflowId: leaf,
            concurrency: 1,
            failurePolicy: "continue",
          },
        ],
      },
      outputs: { out: "each" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    const [attempt] = await attempts(tableId, rowIds[0] ?? "");
    if (!attempt) throw new Error("no attempt");
    const ex = attempt.executionId;
    expect(attempt.childrenTotal).toBe(5);
    const byId = new Map(attempt.children.map((c) => [c.id, c]));
    expect(byId.get(`${ex}:sub`)).toMatchObject({
      parentId: ex,
      blockId: "sub",
      index: null,
      workflowId: middle,
      status: "completed",
    });
    expect(byId.get(`${ex}:sub:inner`)).toMatchObject({
      parentId: `${ex}:sub`,
      blockId: "inner",
      workflowId: leaf,
      status: "completed",
    });
    expect([0, 1, 2].map((i) => byId.get(`${ex}:each:${i}`)?.status)).toEqual([
      "completed",
      "error",
      "completed",
    ]);
    expect(byId.get(`${ex}:each:1`)).toMatchObject({ parentId: ex, index: 1 });
    expect(byId.get(`${ex}:each:1`)?.error).toContain("400");
    expect(byId.get(`${ex}:each:0`)?.endedAt).not.toBeNull();
    // An item's output is kept once, with its step record, and listed from there.
    expect(byId.get(`${ex}:each:2`)?.output).toMatchObject({ status: 200, body: { ok: true } });
    expect(byId.get(`${ex}:sub:inner`)?.output).toMatchObject({ body: { ok: true } });
  });

  it("a Stop of the parent ends every running child at once: all read cancelled", async () => {
    const slow = await workflow([{ id: "nap", type: "wait", ms: 120_000 }]);
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          { id: "each", type: "foreach", items: "[0,1,2,3]", workflowId: slow, concurrency: 4 },
        ],
      },
      outputs: { out: "each" },
    });
    const api = apiClient(key);
    dataOf(
      await api.POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    const running = async () =>
      (
        await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from child_runs where row_id = ${rowIds[0] ?? ""} and status = 'running'`,
        )
      )[0]?.n ?? 0;
    expect(await waitFor(async () => (await running()) === 4, 20_000)).toBe(true);
    dataOf(
      await api.POST("/api/tables/{id}/runs/cancel", {
        params: { path: { id: tableId } },
        body: {},
      }),
    );
    expect(await waitFor(async () => (await cellCounts(tableId)).cancelled === 1, 10_000)).toBe(
      true,
    );
    expect(await waitFor(async () => (await running()) === 0, 10_000)).toBe(true);
    const [attempt] = await attempts(tableId, rowIds[0] ?? "");
    expect(attempt?.children.map((c) => c.status)).toEqual([
      "cancelled",
      "cancelled",
      "cancelled",
      "cancelled",
    ]);
  });
});

describe("the child run record", () => {
  it("refuses a child of an attempt that does not hold the cell, and closes a dead attempt's children", async () => {
    const leaf = await workflow([{ id: "t", type: "transform", expression: "1" }]);
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: { inputs: [], blocks: [{ id: "sub", type: "workflow", workflowId: leaf }] },
      outputs: { out: "sub" },
    });
    const rowId = rowIds[0] ?? "";
    expect(await runToEnd(key, tableId)).toBe("completed");
    const [cell] = await queryRows<{ executionId: string; attempt: number }>(
      db(),
      sql`select execution_id as "executionId", attempt from cells where row_id = ${rowId}`,
    );
    if (!cell) throw new Error("no cell");
    const child = {
      id: `${cell.executionId}:late`,
      executionId: cell.executionId,
      attempt: cell.attempt,
      parentId: cell.executionId,
      rowId,
      groupId: "g",
      blockId: "late",
      itemIndex: null,
      workflowId: leaf,
    };
    // The cell completed: its attempt no longer holds it.
    expect(await startChildRun(db(), child)).toBe(false);
    // A record left running by attempt 1 (its worker died) ends when attempt 2 starts.
    await db().execute(
      sql`insert into child_runs (id, attempt, execution_id, parent_id, row_id, group_id, block_id, workflow_id, status)
          values ('ex_dead:sub', 1, 'ex_dead', 'ex_dead', ${rowId}, 'g', 'sub', ${leaf}, 'running')`,
    );
    expect(
      await sweepChildRuns(db(), { executionId: "ex_dead", attempt: 2, scope: "before" }),
    ).toBe(1);
    expect(
      await sweepChildRuns(db(), { executionId: "ex_dead", attempt: 2, scope: "before" }),
    ).toBe(0);
  });
});
