import { beforeAll, describe, expect, it } from "vitest";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";
import { spawnWorker } from "../helpers/workers";

let key: string;
let url: string;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  key = (await newWorkspace()).key;
}, 60_000);

describe("deadlines", () => {
  it("an attempt past its deadline ends as error with a plain message", async () => {
    const worker = await spawnWorker(url, 2, { CELLFLOW_ATTEMPT_TIMEOUT_MS: "300" });
    const tableId = (await waitTable(key, { groups: 1, ms: 10_000, rows: 1, waitOnly: true })).id;
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    expect(await waitForDispatch(key, tableId, startedRun(run).dispatchId, 20_000)).toBe(
      "completed",
    );
    const rows = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(rows).rows[0]?.cells.g0).toMatchObject({
      status: "error",
      error: "Timed out after 300 ms",
    });
    await worker.kill();
  }, 60_000);

  it("a cascade past its deadline errors the running cell and every cell still waiting", async () => {
    const worker = await spawnWorker(url, 2, {
      CELLFLOW_CASCADE_TIMEOUT_MS: "1500",
      CELLFLOW_ATTEMPT_TIMEOUT_MS: "60000",
    });
    const tableId = (await waitTable(key, { groups: 3, ms: 1_000, rows: 1, waitOnly: true })).id;
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    expect(await waitForDispatch(key, tableId, startedRun(run).dispatchId, 20_000)).toBe(
      "completed",
    );
    const rows = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
    });
    const cells = dataOf(rows).rows[0]?.cells ?? {};
    // g0 fits in the deadline (1 s of 1.5 s); g1 is cut off mid-run; g2 never starts.
    const deadline = { status: "error", error: "The row ran past its 1.5 s limit" };
    expect(cells.g2).toMatchObject(deadline);
    expect(cells.g1).toMatchObject(deadline);
    expect(["completed", "error"]).toContain(cells.g0?.status);
    await worker.kill();
  }, 60_000);
});
