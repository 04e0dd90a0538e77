/**
 * Checkpoints: a worker SIGKILLed while block 3 of 4 runs leaves blocks 1 and 2
 * recorded; the re-driven attempt starts at block 3, so the endpoints of blocks 1 and 2
 * saw exactly one request each, and the cell completes with all four outputs.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { apiClient } from "../helpers/api";
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

it("a crash after block 2 of 4 resumes at block 3; block 2's endpoint saw one request", async () => {
  // Released at the kill: until then the victim's first call to /three gets no answer.
  let release = () => {};
  const killed = new Promise<void>((resolve) => {
    release = resolve;
  });
  ep.on("/one", async () => ({ status: 200, body: 1 }));
  ep.on("/two", async () => ({ status: 200, body: 2 }));
  // The first call to /three outlives the victim; the re-run's call answers at once.
  ep.on("/three", async (_hit, nth) => {
    if (nth === 1) await killed;
    return { status: 200, body: 3 };
  });
  const blocks = ["one", "two", "three"].map((p) => ({
    id: p,
    type: "http" as const,
    method: "POST" as const,
    url: `${ep.url}/${p}`,
    body: { n: p },
  }));
  const all = [
    ...blocks,
    {
      id: "four",
      type: "transform" as const,
      expression: "blocks.one.body + blocks.two.body + blocks.three.body",
    },
  ];
  const linked = all.map((b, i) => (i < all.length - 1 ? { ...b, next: all[i + 1]?.id } : b));
  const { tableId } = await workflowTable(key, {
    workflow: { inputs: [], blocks: linked },
    outputs: { sum: "four" },
    columns: [{ id: "sum", name: "Sum", type: "number" }],
  });

  const victim = await spawnWorker(url, 2);
  await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  expect(await waitFor(() => ep.hitsOf("/three").length === 1, 30_000)).toBe(true);
  await victim.kill("SIGKILL");
  release();

  expect(await useHealedCell(url, tableId)).toBe(true);
  expect(ep.hitsOf("/one")).toHaveLength(1);
  expect(ep.hitsOf("/two")).toHaveLength(1);
  expect(ep.hitsOf("/three")).toHaveLength(2);
  // Both calls of block 3 carried the same Idempotency-Key: a provider can dedupe them.
  const keys = ep.hitsOf("/three").map((h) => h.headers["idempotency-key"]);
  expect(keys[0]).toBe(keys[1]);
  const [row] = await queryRows<{ data: Record<string, unknown> }>(
    getDatabase().db,
    sql`select data from rows where table_id = ${tableId}`,
  );
  expect(row?.data.sum).toBe(6);
}, 120_000);
