/**
 * `POST /runs` with an `Idempotency-Key` (API.md "Money"): a request repeated with its
 * key answers the run it started and stamps nothing again, even when the first request
 * failed after its run was created or is still creating it; the key with another request
 * is a 409; keys are per table and held 24 h; a dry run neither records nor reads its key.
 * No worker runs here: stamped cells stay queued, so what each request wrote is visible.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import type { TaskBackend } from "@/backends/port";
import type { Schemas } from "@/client/cellflow-client";
import { ApiError } from "@/contracts/common";
import { digestOf } from "@/domain/digest";
import { startKeyedRun } from "@/engine/dispatcher";
import { createKeyedDispatch } from "@/store/run-keys/create-keyed";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

const ROWS = 5;
const db = () => getDatabase().db;
let key: string;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

async function newTable(): Promise<string> {
  const { tableId } = await workflowTable(key, {
    workflow: upperDefinition,
    outputs: { up: "out" },
    columns: [{ id: "v", name: "V", type: "text" }],
    group: { inputs: { v: "v" }, autoRun: false },
    rows: Array.from({ length: ROWS }, (_, i) => ({ v: `v${i}` })),
  });
  return tableId;
}

const runs = (tableId: string, body: Schemas["CreateRunRequest"], idempotencyKey?: string) =>
  apiClient(key).POST("/api/tables/{id}/runs", {
    params: {
      path: { id: tableId },
      ...(idempotencyKey === undefined ? {} : { header: { "idempotency-key": idempotencyKey } }),
    },
    body,
  });

/** Everything a run request writes on the table, as one comparable value. */
async function footprint(tableId: string): Promise<unknown> {
  const [row] = await queryRows(
    db(),
    sql`select (select count(*)::int from dispatches where table_id = ${tableId}) as dispatches,
               (select count(*)::int from run_keys where table_id = ${tableId}) as keys,
               (select count(*)::int from events where table_id = ${tableId}) as events,
               (select count(*)::int from graphile_worker.jobs) as jobs,
               (select md5(coalesce(string_agg(row_id || group_id || status || execution_id || coalesce(dispatch_id, ''), ',' order by row_id, group_id), ''))
                  from cells where table_id = ${tableId}) as cells`,
  );
  return row;
}

async function dispatchIds(tableId: string): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db(),
    sql`select id from dispatches where table_id = ${tableId} order by id`,
  );
  return rows.map((r) => r.id);
}

/** The process backend, swapped for one whose next enqueue fails (and then is put back). */
function failNextEnqueue(): void {
  const holder = globalThis as { __cellflowBackend?: TaskBackend };
  const real = getBackend();
  holder.__cellflowBackend = {
    kind: real.kind,
    remoteCancel: real.remoteCancel,
    enqueue: async () => {
      holder.__cellflowBackend = real;
      throw new Error("the task queue cannot be reached");
    },
    cancelRun: (id) => real.cancelRun(id),
    close: () => real.close(),
  };
}

describe("a run request repeated with its Idempotency-Key", () => {
  it("answers the first run, with the same id, and stamps nothing again", async () => {
    const tableId = await newTable();
    const first = await runs(tableId, { mode: "all", groupIds: ["g"] }, "k-same");
    expect(first.response.status).toBe(202);
    expect(first.response.headers.get("cellflow-replayed")).toBeNull();
    const run = startedRun(first);
    expect(run).toEqual({ dispatchId: run.dispatchId, stamped: ROWS, stamping: false });
    const after = await footprint(tableId);

    // The same request as parsed: fields in another order.
    const again = await runs(tableId, { groupIds: ["g"], mode: "all" }, "k-same");
    expect(again.response.status).toBe(202);
    expect(again.response.headers.get("cellflow-replayed")).toBe("true");
    expect(startedRun(again)).toEqual(run);
    expect(await footprint(tableId)).toEqual(after);
    expect(await dispatchIds(tableId)).toEqual([run.dispatchId]);
  });

  it("with another request is a 409 conflict and starts nothing", async () => {
    const tableId = await newTable();
    startedRun(await runs(tableId, { mode: "all" }, "k-other"));
    const before = await footprint(tableId);
    for (const body of [{ mode: "new" }, { mode: "all", limit: 2 }] as const) {
      const other = await runs(tableId, body, "k-other");
      expect(other.response.status, JSON.stringify(body)).toBe(409);
      expect(ApiError.parse(other.error).error.code).toBe("conflict");
    }
    expect(await footprint(tableId)).toEqual(before);
  });

  it("answers the run when the first request failed after creating it (a 500 after the stamps committed)", async () => {
    const tableId = await newTable();
    failNextEnqueue();
    const failed = await runs(tableId, { mode: "all" }, "k-500");
    expect(failed.response.status).toBe(500);
    const [created] = await dispatchIds(tableId);
    const after = await footprint(tableId);

    const retry = await runs(tableId, { mode: "all" }, "k-500");
    expect(retry.response.status).toBe(202);
    expect(retry.response.headers.get("cellflow-replayed")).toBe("true");
    expect(startedRun(retry)).toEqual({ dispatchId: created, stamped: ROWS, stamping: false });
    expect(await footprint(tableId)).toEqual(after);
  });

  it("a key is the table's: the same key on another table starts a run there", async () => {
    const [a, b] = [await newTable(), await newTable()];
    const onA = startedRun(await runs(a, { mode: "all" }, "k-table"));
    const onB = await runs(b, { mode: "all" }, "k-table");
    expect(onB.response.headers.get("cellflow-replayed")).toBeNull();
    expect(startedRun(onB).dispatchId).not.toBe(onA.dispatchId);
    expect(await dispatchIds(b)).toEqual([startedRun(onB).dispatchId]);
  });

  it("without a key every request is a run of its own", async () => {
    const tableId = await newTable();
    const one = startedRun(await runs(tableId, { mode: "all" }));
    const two = startedRun(await runs(tableId, { mode: "all" }));
    expect(one.dispatchId).not.toBe(two.dispatchId);
    expect(await dispatchIds(tableId)).toHaveLength(2);
  });

  it("a key older than 24 h no longer holds: another request with it starts a run", async () => {
    const tableId = await newTable();
    const old = startedRun(await runs(tableId, { mode: "all" }, "k-old"));
    await db().execute(
      sql`update run_keys set created_at = now() - interval '24 hours 1 minute' where table_id = ${tableId}`,
    );
    const fresh = await runs(tableId, { mode: "new" }, "k-old");
    expect(fresh.response.status).toBe(202);
    expect(fresh.response.headers.get("cellflow-replayed")).toBeNull();
    expect(startedRun(fresh).dispatchId).not.toBe(old.dispatchId);
    // The key now names the new run.
    const again = await runs(tableId, { mode: "new" }, "k-old");
    expect(startedRun(again).dispatchId).toBe(startedRun(fresh).dispatchId);
  });
});

describe("a repeat while the first request is still creating its run", () => {
  it("waits for the first request's transaction, then answers its run: one run", async () => {
    const tableId = await newTable();
    let repeat: ReturnType<typeof runs> | undefined;
    // The first request's creation (the dispatch and its key, one transaction), held open
    // until the repeat is seen waiting on the key.
    const firstId = await db().transaction(async (tx) => {
      const created = await createKeyedDispatch(
        tx,
        { tableId, groupIds: ["g"], mode: "all", rowIds: null, rowLimit: null, window: 50 },
        { tableId, key: "k-together", requestDigest: digestOf({ mode: "all" }) },
      );
      if (!created.created) throw new Error("the key was free");
      repeat = runs(tableId, { mode: "all" }, "k-together");
      const waiting = await waitFor(async () => {
        const [row] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_locks where locktype = 'transactionid' and not granted`,
        );
        return (row?.n ?? 0) > 0;
      }, 10_000);
      expect(waiting, "the repeat waits on the first's uncommitted key").toBe(true);
      return created.dispatchId;
    });
    const answered = await repeat;
    if (!answered) throw new Error("no repeat sent");
    expect(answered.response.status).toBe(202);
    expect(answered.response.headers.get("cellflow-replayed")).toBe("true");
    // Created and not stamped yet (the re-drive's background stamper takes such a run on).
    expect(startedRun(answered)).toEqual({ dispatchId: firstId, stamped: 0, stamping: true });
    expect(await dispatchIds(tableId)).toEqual([firstId]);
  });

  it("a repeat between the creation and the first page answers the run; the first then stamps it once", async () => {
    const tableId = await newTable();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let created: (id: string) => void = () => {};
    const createdId = new Promise<string>((r) => {
      created = r;
    });
    const first = startKeyedRun(
      {
        db: db(),
        backend: getBackend(),
        pause: async (point, detail) => {
          if (point !== "run:created") return;
          created(detail?.dispatchId ?? "");
          await held;
        },
      },
      {
        scope: { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 50 },
        key: { tableId, key: "k-stamping", requestDigest: digestOf({ mode: "all" }) },
      },
    );
    const dispatchId = await createdId;
    const repeat = await runs(tableId, { mode: "all" }, "k-stamping");
    expect(startedRun(repeat)).toEqual({ dispatchId, stamped: 0, stamping: true });
    release();
    const done = await first;
    expect(done).toEqual({
      kind: "started",
      run: { dispatchId, stamped: ROWS, stamping: false },
    });
    const [cells] = await queryRows<{ n: number; runs: number }>(
      db(),
      sql`select count(*)::int as n, count(distinct dispatch_id)::int as runs
            from cells where table_id = ${tableId}`,
    );
    expect(cells).toEqual({ n: ROWS, runs: 1 });
    expect(await dispatchIds(tableId)).toEqual([dispatchId]);
    // Done now: a later repeat sees it stamped.
    expect(startedRun(await runs(tableId, { mode: "all" }, "k-stamping"))).toEqual({
      dispatchId,
      stamped: ROWS,
      stamping: false,
    });
  });
});

describe("the Idempotency-Key header", () => {
  it("empty or longer than 255 characters is a 400 naming the header, and nothing starts", async () => {
    const tableId = await newTable();
    const before = await footprint(tableId);
    for (const bad of ["", "k".repeat(256)]) {
      const res = await runs(tableId, { mode: "all" }, bad);
      expect(res.response.status, `${bad.length} characters`).toBe(400);
      const issues = ApiError.parse(res.error).error.issues ?? [];
      expect(issues.map((i) => i.path)).toEqual(["idempotency-key"]);
    }
    expect(await footprint(tableId)).toEqual(before);
    startedRun(await runs(tableId, { mode: "all" }, "k".repeat(255)));
  });

  it("a dry run neither records its key nor is answered from it", async () => {
    const tableId = await newTable();
    const before = await footprint(tableId);
    const dry = await runs(tableId, { mode: "all", dryRun: true }, "k-dry");
    expect(dry.response.status).toBe(200);
    expect(dataOf(dry)).toMatchObject({ rows: ROWS, cells: ROWS });
    expect(await footprint(tableId)).toEqual(before);
    // The key is still free for a real run, which is not a repeat of the dry one.
    const real = await runs(tableId, { mode: "all" }, "k-dry");
    expect(real.response.status).toBe(202);
    expect(real.response.headers.get("cellflow-replayed")).toBeNull();
    // And a dry run with a key a run holds is still a dry run, not that run nor a conflict.
    const dryAgain = await runs(tableId, { mode: "new", dryRun: true }, "k-dry");
    expect(dryAgain.response.status).toBe(200);
    expect(dataOf(dryAgain)).toMatchObject({ rows: 0, cells: 0 });
  });
});
