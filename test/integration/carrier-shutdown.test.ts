/**
 * A carrier whose worker is already stopping when it reaches the row (the stop came while
 * it took the row lock, or before its job began) hands the row back without starting an
 * attempt: the abort event fired before anyone listened, and the attempt used to run to
 * its end, holding the shutdown for as long as its blocks took.
 */

import { createDatabase, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalBackend } from "@/backends/local";
import { abortLocal } from "@/engine/cancellation";
import { runCarrier } from "@/engine/carrier";
import { apiClient, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, engineDeps } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;
let url: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  key = (await newWorkspace()).key;
});

describe("a carrier of a stopping worker", () => {
  const database = () => createDatabase({ url, poolMax: 5 });
  let opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of opened) await o.close();
    opened = [];
  });

  it("hands its row back unstarted when the stop came before it reached the row", async () => {
    const t = await waitTable(key, { groups: 1, ms: 60_000, rows: 1 });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    expect(run.response.status).toBe(202);
    // No worker runs in this file: drop the job the run queued, so that a job found after
    // the carrier is the one it handed back.
    await db().execute(sql`delete from graphile_worker._private_jobs`);
    const deps = engineDeps({ database: database(), backend: new LocalBackend(url) });
    opened.push(deps.database, deps.backend);
    const stopping = new AbortController();
    stopping.abort(new Error("worker stopping"));

    const carrying = runCarrier(
      deps,
      { tableId: t.id, rowId: t.rowIds[0] as string, dispatchId: startedRun(run).dispatchId },
      { runId: "stopping-worker", signal: stopping.signal },
    );
    try {
      // Either the carrier returns, or the cell starts its 60 s wait (the bug).
      const outcome = await Promise.race([
        carrying.then(() => "returned" as const),
        waitFor(async () => (await cellCounts(t.id)).running === 1, 30_000, 20).then((ran) =>
          ran ? ("started an attempt" as const) : ("neither" as const),
        ),
      ]);
      expect(outcome).toBe("returned");
    } finally {
      // If it did start, end the wait rather than leave it running past the test.
      const cells = await queryRows<{ executionId: string }>(
        db(),
        sql`select execution_id as "executionId" from cells where table_id = ${t.id}`,
      );
      abortLocal(cells.map((c) => c.executionId));
      await carrying.catch(() => {});
    }
    const cells = await queryRows<{ status: string; attempt: number }>(
      db(),
      sql`select status::text, attempt from cells where table_id = ${t.id}`,
    );
    expect(cells).toEqual([{ status: "queued", attempt: 0 }]);
    const jobs = await queryRows<{ key: string }>(db(), sql`select key from graphile_worker.jobs`);
    expect(jobs.map((j) => j.key)).toEqual([`carrier:${t.id}:${t.rowIds[0]}`]);
  }, 60_000);
});
