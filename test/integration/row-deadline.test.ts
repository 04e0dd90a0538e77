/**
 * Nothing of a finished row outlives its cascade: every row's deadline armed while the
 * cascades ran is disarmed once they end (row-deadline.ts). Before, each row's deadline
 * held its cascade in memory for the plan's whole deadline (up to 6 h), so a worker's RSS
 * grew with the cells it had run.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { apiClient, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;
let url: string;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  key = (await newWorkspace()).key;
}, 60_000);

describe("a row's deadline", () => {
  it("is armed while its cascade runs and disarmed when it ends, for every row of a run", async () => {
    const worker = await useWorker(url, 10);
    const table = await waitTable(key, { groups: 2, ms: 300, rows: 30, waitOnly: true });
    expect(worker.rowsInFlight()).toBe(0);
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: table.id } },
        body: { mode: "all" },
      }),
    );
    // The cascades in flight hold theirs (the worker runs ten rows at once)…
    expect(await waitFor(() => worker.rowsInFlight() > 0, 20_000, 5)).toBe(true);
    expect(await waitForDispatch(key, table.id, run.dispatchId, 60_000)).toBe("completed");
    // …and none is left once every row's cascade has ended.
    expect(await waitFor(() => worker.rowsInFlight() === 0, 10_000, 20)).toBe(true);
  }, 90_000);
});
