/**
 * Issue 31's "done when" for destinations, end to end with a worker in this process: every
 * finished row of a 1,000-row run reaches the destination at least once with a valid
 * signature, while the receiver fails a third of its calls (503s and dropped
 * connections, alternately), and no delivery id is ever sent with two bodies.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Receiver, startReceiver } from "../helpers/destination-receiver";
import { useWorker } from "../helpers/engine";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

process.env.CELLFLOW_SECRET_KEY ??= randomBytes(32).toString("base64");
// Retries come fast here; the backoff's shape is tested with a clock (destinations-outbox).
process.env.CELLFLOW_DESTINATION_RETRY_BASE_MS = "50";

const ROWS = 1_000;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 20);
  key = (await newWorkspace()).key;
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describe("a 1,000-row run with a destination that fails a third of its calls", () => {
  it("delivers every finished row at least once, signed, and never one id with two bodies", async () => {
    const { tableId } = await workflowTable(key, {
      workflow: upperDefinition,
      outputs: { up: "out" },
      columns: [
        { id: "v", name: "V", type: "text" },
        { id: "up", name: "Up", type: "text" },
      ],
      group: { inputs: { v: "v" }, dependsOn: ["v"], autoRun: false },
      rows: [],
    });
    const d = dataOf(
      await apiClient(key).POST("/api/tables/{id}/destinations", {
        params: { path: { id: tableId } },
        body: { url: receiver.url },
      }),
    );
    receiver.secret = d.secret;
    receiver.answer = (call) => (call % 3 !== 0 ? 200 : call % 6 === 0 ? "drop" : 503);
    await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: Array.from({ length: ROWS }, (_, i) => ({ data: { v: `v${i}` } })) },
    });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    expect(run.response.status).toBe(202);
    const delivered = () =>
      new Set(
        receiver.received
          .filter((r) => r.answered === 200 && r.signed)
          .map((r) => JSON.parse(r.body).rowId as string),
      );
    expect(await waitFor(() => delivered().size >= ROWS, 50_000, 200)).toBe(true);
    const finished = await queryRows<{ id: string }>(
      getDatabase().db,
      sql`select r.id from rows r where r.table_id = ${tableId}
           and not exists (select 1 from cells c where c.row_id = r.id
                            and c.status in ('queued', 'running', 'paused'))`,
    );
    expect(finished).toHaveLength(ROWS);
    const got = delivered();
    expect(finished.filter((r) => !got.has(r.id))).toEqual([]);
    expect(receiver.received.every((r) => r.signed)).toBe(true);
    expect(receiver.received.some((r) => r.answered !== 200)).toBe(true);
    const bodies = new Map<string, Set<string>>();
    for (const r of receiver.received)
      bodies.set(r.id, (bodies.get(r.id) ?? new Set()).add(r.bodyHash));
    expect([...bodies.values()].filter((s) => s.size > 1)).toEqual([]);
    // Each delivered body is the row as it finished: its cell completed, its output filled.
    const sample = JSON.parse(receiver.received.find((r) => r.answered === 200)?.body ?? "{}");
    expect(sample.cells.g.status).toBe("completed");
    expect(sample.data.up).toBe(String(sample.data.v).toUpperCase());
  }, 60_000);
});
