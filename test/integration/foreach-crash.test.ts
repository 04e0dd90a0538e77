/**
 * Durable fan-out: a worker SIGKILLed while a foreach runs 50 items (at most 5 at once)
 * leaves every finished item recorded; the re-driven attempt runs only the items not
 * finished, so each item's endpoint saw one request — except the items in flight at the
 * kill, at most the cap, which ran twice.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useHealedCell } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";
import { spawnWorker } from "../helpers/workers";

let key: string;
let url: string;
let ep: Endpoint;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  key = (await newWorkspace()).key;
  ep = await startEndpoint();
});
afterAll(() => ep.close());

it("a crash mid-fan-out of 50 items: after healing each item was called once, but those in flight at the kill (at most the cap)", async () => {
  const CAP = 5;
  const calls = new Map<number, number>();
  // Released at the kill: until then the victim's calls of later items get no answer.
  let release = () => {};
  const killed = new Promise<void>((resolve) => {
    release = resolve;
  });
  let dead = false;
  // Items 0–19 answer at once; the victim's calls of later items never do, so the kill
  // finds exactly the cap in flight. After the kill every call answers at once.
  ep.on("/sink", async (hit) => {
    const i = Number(hit.query.get("i"));
    calls.set(i, (calls.get(i) ?? 0) + 1);
    if (i >= 20 && !dead) await killed;
    return { status: 200, body: { i } };
  });
  const child = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: {
        name: "sink item",
        definition: {
          blocks: [
            { id: "post", type: "http", method: "POST", url: `${ep.url}/sink?i={{ inputs.item }}` },
          ],
        },
      },
    }),
  ).id;
  const items = JSON.stringify(Array.from({ length: 50 }, (_, i) => i));
  const { tableId } = await workflowTable(key, {
    workflow: {
      inputs: [],
      blocks: [{ id: "each", type: "foreach", items, workflowId: child, concurrency: CAP }],
    },
    outputs: { out: "each" },
  });

  const victim = await spawnWorker(url, 2);
  await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  expect(await waitFor(() => ep.hitsOf("/sink").length === 20 + CAP, 30_000)).toBe(true);
  await victim.kill("SIGKILL");
  dead = true;
  release();
  const inFlight = new Set(
    ep
      .hitsOf("/sink")
      .filter((h) => Number(h.query.get("i")) >= 20)
      .map((h) => Number(h.query.get("i"))),
  );
  expect(inFlight.size).toBe(CAP);

  expect(await useHealedCell(url, tableId)).toBe(true);
  const twice = [...calls]
    .filter(([, n]) => n === 2)
    .map(([i]) => i)
    .sort((a, b) => a - b);
  expect(twice).toEqual([...inFlight].sort((a, b) => a - b));
  expect([...calls].filter(([, n]) => n === 1)).toHaveLength(50 - CAP);
  expect(calls.size).toBe(50);
  const [row] = await queryRows<{ data: { out: { ok: number; failed: number } } }>(
    getDatabase().db,
    sql`select data from rows where table_id = ${tableId}`,
  );
  expect(row?.data.out).toMatchObject({ ok: 50, failed: 0 });
}, 120_000);
