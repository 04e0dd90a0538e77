/**
 * The real-time smoke test of table schedules (issue 31's "done when"): with two worker
 * processes joined to one database, each looking for due schedules every few seconds on
 * the system clock, an every-minute schedule starts exactly one run per minute. The first
 * due time is put two seconds ahead so the test needs one minute boundary after it, not
 * two (about 70 s in all); the run has no rows, so it ends at once and no due time is
 * skipped for it.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { SCHEDULE_EVERY_MS } from "@/services/schedule-fire";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { spawnWorker } from "../helpers/workers";

let key: string;
let url: string;
beforeAll(async () => {
  ({ url } = await useTestDatabase());
  key = (await newWorkspace()).key;
}, 60_000);

async function runs(tableId: string): Promise<{ id: string; minute: string }[]> {
  return queryRows(
    getDatabase().db,
    sql`select id, to_char(created_at at time zone 'UTC', 'HH24:MI') as minute
          from dispatches where table_id = ${tableId} order by created_at`,
  );
}

describe("an every-minute schedule with two workers joined", () => {
  it("starts one run per minute, never two", async () => {
    const workers = await Promise.all([spawnWorker(url, 2), spawnWorker(url, 2)]);
    const wf = await apiClient(key).POST("/api/workflows", {
      body: { name: "upper", definition: upperDefinition },
    });
    const t = await apiClient(key).POST("/api/tables", {
      body: {
        name: "Every minute",
        columns: [{ id: "v", name: "V", type: "text" }],
        groups: [
          { id: "g", name: "G", kind: "workflow", workflowId: dataOf(wf).id, inputs: { v: "v" } },
        ],
      },
    });
    const tableId = dataOf(t).id;
    const s = dataOf(
      await apiClient(key).POST("/api/tables/{id}/schedules", {
        params: { path: { id: tableId } },
        body: { cron: "* * * * *", mode: "all" },
      }),
    );
    await getDatabase().db.execute(
      sql`update schedules set next_run_at = now() + interval '2 seconds' where id = ${s.id}`,
    );
    expect(await waitFor(async () => (await runs(tableId)).length >= 2, 75_000, 500)).toBe(true);
    // Both workers look again after the second run: a duplicate would show by now.
    await new Promise((r) => setTimeout(r, SCHEDULE_EVERY_MS + 2_000));
    const started = await runs(tableId);
    expect(started).toHaveLength(2);
    expect(new Set(started.map((r) => r.minute)).size).toBe(2);
    const list = await apiClient(key).GET("/api/tables/{id}/schedules", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).schedules[0]).toMatchObject({
      lastDispatchId: started[1]?.id,
      skipped: 0,
    });
    await Promise.all(workers.map((w) => w.kill()));
  }, 120_000);
});
