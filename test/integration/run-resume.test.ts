/**
 * `POST /runs` with `resume: true`, end to end on a real worker against a loopback sink:
 * a cell whose block 1 (http) succeeded and block 2 failed starts again at block 2 (block
 * 1's endpoint is not called again), under a new execution that names the old one as
 * `resumedFrom` in the attempt history; a cell whose first block failed has nothing to
 * resume from and runs from the start. `resume` with `all` or `new` is refused with a
 * clear message; a dry run accepts it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { CellAttemptsResponse } from "@/contracts/cells";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { workflowTable } from "../helpers/tables";

let key: string;
let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  key = (await newWorkspace()).key;
  ep = await startEndpoint();
});
afterAll(() => ep.close());

/** A table of one row whose group calls `/<prefix>-one`, then `/<prefix>-two`. */
async function twoCallTable(prefix: string): Promise<{ tableId: string; rowId: string }> {
  const call1 = {
    id: "one",
    type: "http" as const,
    method: "POST" as const,
    url: `${ep.url}/${prefix}-one`,
  };
  const call2 = {
    id: "two",
    type: "http" as const,
    method: "POST" as const,
    url: `${ep.url}/${prefix}-two`,
  };
  const { tableId, rowIds } = await workflowTable(key, {
    workflow: { inputs: [], blocks: [{ ...call1, next: "two" }, call2] },
    outputs: { first: "one.body", second: "two.body" },
  });
  return { tableId, rowId: rowIds[0] ?? "" };
}

async function runAndWait(tableId: string, body: Schemas["CreateRunRequest"]): Promise<void> {
  const res = await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body,
  });
  expect(res.response.status, JSON.stringify(res.error ?? res.data)).toBe(202);
  expect(await waitForDispatch(key, tableId, startedRun(res).dispatchId)).toBe("completed");
}

async function attempts(tableId: string, rowId: string) {
  const res = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
    params: { path: { id: tableId, rowId, groupId: "g" } },
  });
  expect(res.response.status).toBe(200);
  return CellAttemptsResponse.parse(dataOf(res)).attempts;
}

const failFirstCall = async (_hit: unknown, nth: number) =>
  nth === 1 ? { status: 500, body: { error: "not yet" } } : { status: 200, body: { n: nth } };

describe("resume: true", () => {
  it("a fan-out under continue that ended with failed items runs only those items when resumed", async () => {
    const seen = new Map<number, number>();
    ep.on("/fan", async (hit) => {
      const i = Number(hit.query.get("i"));
      seen.set(i, (seen.get(i) ?? 0) + 1);
      // Item 2 fails the first time; the block after the fan-out too (so the cell errs).
      return i === 2 && seen.get(i) === 1
        ? { status: 400, body: { no: i } }
        : { status: 200, body: { i } };
    });
    ep.on("/fan-after", failFirstCall);
    const child = dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: {
          name: "fan item",
          definition: {
            blocks: [
              { id: "get", type: "http", method: "GET", url: `${ep.url}/fan?i={{ inputs.item }}` },
            ],
          },
        },
      }),
    ).id;
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          {
            id: "each",
            type: "foreach",
            items: "[0,1,2,3,4,5]",
            workflowId: child,
            concurrency: 2,
            failurePolicy: "continue",
            next: "after",
          },
          { id: "after", type: "http", method: "POST", url: `${ep.url}/fan-after` },
        ],
      },
      outputs: { out: "each" },
    });
    await runAndWait(tableId, { mode: "all" });
    const [failed] = await attempts(tableId, rowIds[0] ?? "");
    expect(failed).toMatchObject({ status: "error" });
    expect([...seen.values()]).toEqual([1, 1, 1, 1, 1, 1]);

    await runAndWait(tableId, { mode: "failed", resume: true });
    // Only the failed item ran again; the finished ones were reused.
    expect([...seen].sort(([a], [b]) => a - b)).toEqual([
      [0, 1],
      [1, 1],
      [2, 2],
      [3, 1],
      [4, 1],
      [5, 1],
    ]);
    const [resumed] = await attempts(tableId, rowIds[0] ?? "");
    expect(resumed).toMatchObject({
      status: "completed",
      resumedFrom: failed?.executionId,
      outputs: { out: { ok: 6, failed: 0 } },
    });
  });

  it("a resumed cell does not call block 1's endpoint again, calls block 2's once, and completes", async () => {
    ep.on("/r-one", async () => ({ status: 200, body: { first: true } }));
    ep.on("/r-two", failFirstCall);
    const { tableId, rowId } = await twoCallTable("r");
    await runAndWait(tableId, { mode: "all" });
    const [failed] = await attempts(tableId, rowId);
    expect(failed).toMatchObject({ status: "error", resumedFrom: null });
    expect(ep.hitsOf("/r-one")).toHaveLength(1);
    expect(ep.hitsOf("/r-two")).toHaveLength(1);

    await runAndWait(tableId, { mode: "failed", resume: true });
    expect(ep.hitsOf("/r-one")).toHaveLength(1);
    expect(ep.hitsOf("/r-two")).toHaveLength(2);
    const [resumed, before, ...rest] = await attempts(tableId, rowId);
    expect(rest).toEqual([]);
    expect(resumed).toMatchObject({
      status: "completed",
      resumedFrom: failed?.executionId,
      // Block 1's output is the one the failed attempt recorded.
      outputs: { first: { first: true }, second: { n: 2 } },
    });
    expect(resumed?.executionId).not.toBe(failed?.executionId);
    expect(before).toMatchObject({ executionId: failed?.executionId, status: "error" });
    // The new execution's calls carry its own idempotency key.
    const keys = ep.hitsOf("/r-two").map((h) => h.headers["idempotency-key"]);
    expect(keys[1]).toBe(`${resumed?.executionId}:two`);
  }, 60_000);

  it("a cell whose first block failed has nothing to resume from and runs from the start", async () => {
    ep.on("/s-one", failFirstCall);
    const { tableId, rowId } = await twoCallTable("s");
    await runAndWait(tableId, { mode: "all" });
    await runAndWait(tableId, { mode: "incomplete", resume: true });
    expect(ep.hitsOf("/s-one")).toHaveLength(2);
    expect(ep.hitsOf("/s-two")).toHaveLength(1);
    const [resumed] = await attempts(tableId, rowId);
    expect(resumed).toMatchObject({ status: "completed", resumedFrom: null });
  }, 60_000);

  it("resume with mode all or new is refused with a 400 naming the field; a dry run accepts it", async () => {
    const { tableId } = await twoCallTable("v");
    for (const mode of ["all", "new"] as const) {
      const res = await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode, resume: true },
      });
      expect(res.response.status).toBe(400);
      expect(res.error?.error.issues).toEqual([
        expect.objectContaining({ path: "resume", message: expect.stringMatching(/incomplete/) }),
      ]);
    }
    const dry = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "incomplete", resume: true, dryRun: true },
    });
    expect(dry.response.status).toBe(200);
    expect(dataOf(dry)).toMatchObject({ rows: 1, cells: 1 });
  });
});
