/**
 * A waterfall cell whose worker died mid-step is re-driven without charging twice: what
 * the dead attempt reserved (step 1's rejected answer, step 2's call in flight) is given
 * back by the re-drive, the new attempt of the same execution calls the steps again, and
 * each step's key is charged once, by the write that records the cell.
 */
import { createDatabase, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalBackend } from "@/backends/local";
import { log } from "@/config/log";
import { redriveOrphans } from "@/engine/redrive";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, redriveEngine, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { spawnWorker } from "../helpers/workers";

/** company_lookup's price. */
const COST = 5;
// Off here and in the worker it spawns: each attempt asks the providers (the result
// cache would serve the re-run's step 1 and hold step 2's key until the dead claim goes stale).
process.env.CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS = "0";

let ep: Endpoint;
let url: string;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  ep = await startEndpoint();
});

afterAll(async () => {
  await ep.close();
});

const db = () => getDatabase().db;
const usage = async (key: string) => dataOf(await apiClient(key).GET("/api/usage"));

describe("a waterfall cell re-driven after its worker died", () => {
  it("charges each step that answered once, and gives back what the dead attempt reserved", async () => {
    const { key } = await newWorkspace();
    await apiClient(key).PUT("/api/secrets/{name}", {
      params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
      body: { value: `${ep.url}/company` },
    });
    let stepTwoHangs = true;
    ep.on("/company", async (hit) => {
      const domain = hit.query.get("domain") ?? "";
      if (domain === "first.example") return { status: 200, body: { name: "Not it" } };
      if (stepTwoHangs) return "hang";
      return { status: 200, body: { name: "Acme" } };
    });
    const t = dataOf(
      await apiClient(key).POST("/api/tables", {
        body: {
          name: "redrive",
          columns: ["d1", "d2", "company"].map((id) => ({ id, name: id, type: "text" as const })),
          groups: [
            {
              id: "g",
              name: "Company",
              kind: "waterfall",
              steps: [
                {
                  enrichmentId: "company_lookup",
                  inputs: { domain: "d1" },
                  outputs: { name: "name" },
                  validate: [{ output: "name", op: "eq", value: "Acme" }],
                },
                {
                  enrichmentId: "company_lookup",
                  inputs: { domain: "d2" },
                  outputs: { name: "name" },
                },
              ],
              outputs: [{ columnId: "company", from: "name" }],
            },
          ],
        },
      }),
    );
    const rows = dataOf(
      await apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: t.id } },
        body: { rows: [{ data: { d1: "first.example", d2: "second.example" } }] },
      }),
    );
    const rowId = rows.rows[0]?.id as string;
    const victim = await spawnWorker(url, 4, { CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS: "0" });
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: t.id } },
        body: { mode: "all" },
      }),
    );
    const secondCalls = () =>
      ep.hitsOf("/company").filter((h) => h.query.get("domain") === "second.example").length;
    expect(await waitFor(async () => secondCalls() === 1, 30_000)).toBe(true);
    // Step 1's answer (kept for the terminal write) and step 2's call, both reserved.
    expect((await usage(key)).reserved).toBe(2 * COST);
    await victim.kill("SIGKILL");
    const sessions = async () => {
      const [r] = await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from pg_stat_activity
             where application_name = 'cellflow-worker' and datname = current_database()`,
      );
      return r?.n ?? 0;
    };
    expect(await waitFor(async () => (await sessions()) === 0, 10_000, 10)).toBe(true);
    expect(await cellCounts(t.id)).toEqual({ running: 1 });

    const machine = {
      database: createDatabase({ url, poolMax: 5 }),
      backend: new LocalBackend(url),
    };
    try {
      await redriveOrphans(redriveEngine({ ...machine, log: log() }));
    } finally {
      await machine.backend.close();
      await machine.database.close();
    }
    expect(await cellCounts(t.id)).toEqual({ queued: 1 });
    // The dead attempt's reservations went back with it.
    expect((await usage(key)).reserved).toBe(0);
    expect((await usage(key)).used).toBe(0);

    stepTwoHangs = false;
    await useWorker(url, 4);
    expect(await waitForDispatch(key, t.id, run.dispatchId)).toBe("completed");
    const cell = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
        params: { path: { id: t.id, rowId, groupId: "g" } },
      }),
    );
    expect(cell).toMatchObject({ status: "completed", outcome: "ok", attempt: 2 });
    expect(cell.outputs).toEqual({ company: "Acme" });
    const after = await usage(key);
    expect(after.used).toBe(2 * COST);
    expect(after.reserved).toBe(0);
    expect(after.bySource).toEqual([
      { source: "company_lookup@step1", credits: COST },
      { source: "company_lookup@step2", credits: COST },
    ]);
    expect(secondCalls()).toBe(2);
  }, 120_000);
});
