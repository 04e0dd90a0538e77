/**
 * Pausing: an approval pauses its cell and frees the row; a resume with the paused
 * attempt's execution id continues after the approval block (its data is the block's
 * output) and the cascade goes on; a wrong id is refused; a Stop on a paused cell holds.
 * A long wait that is due comes back by itself.
 */

import { createDatabase } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { LocalBackend } from "@/backends/local";
import type { Schemas } from "@/client/cellflow-client";
import { log } from "@/config/log";
import { redriveOrphans } from "@/engine/redrive";
import { rowLockKey } from "@/engine/row-lock";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { redriveEngine, useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";
import { workflowTable } from "../helpers/tables";

let key: string;
let url: string;
const db = () => getDatabase().db;

type Cell = { status: string; executionId: string; outcome: string | null };
type Row = { id: string; data: Record<string, unknown>; cells: Record<string, Cell> };

async function workflow(blocks: Schemas["Block"][]): Promise<string> {
  const r = await apiClient(key).POST("/api/workflows", {
    body: { name: "w", definition: { blocks } },
  });
  return dataOf(r).id;
}

/** g1: approval → echo the approved answer into column a; g2 (auto-run on a): a → b. */
async function approvalTable(): Promise<{ id: string; rowId: string }> {
  const approve = await workflow([
    { id: "ask", type: "approval", prompt: "OK?", next: "use" },
    { id: "use", type: "transform", expression: "blocks.ask.answer" },
  ]);
  const shout = await workflow([{ id: "out", type: "transform", expression: "$uppercase(row.A)" }]);
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "approvals",
      columns: [
        { id: "a", name: "A", type: "text" },
        { id: "b", name: "B", type: "text" },
      ],
      groups: [
        {
          id: "g1",
          name: "Approve",
          kind: "workflow",
          workflowId: approve,
          outputs: [{ columnId: "a", from: "use" }],
        },
        {
          id: "g2",
          name: "Shout",
          kind: "workflow",
          workflowId: shout,
          outputs: [{ columnId: "b", from: "out" }],
          dependsOn: ["a"],
          autoRun: true,
        },
      ],
    },
  });
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(t).id } },
    body: { rows: [{ data: {} }] },
  });
  return { id: dataOf(t).id, rowId: dataOf(rows).rows[0]?.id as string };
}

const getRow = async (t: string, r: string) =>
  dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: r } },
    }),
  );

async function waitCell(t: string, r: string, group: string, status: string): Promise<Row> {
  let last: Row | undefined;
  const ok = await waitFor(async () => {
    last = await getRow(t, r);
    return last.cells[group]?.status === status;
  }, 30_000);
  if (!ok) throw new Error(`${group} never became ${status}: ${JSON.stringify(last)}`);
  return last as Row;
}

const resume = (t: string, r: string, body: Schemas["ResumeCellRequest"]) =>
  apiClient(key).POST("/api/tables/{id}/rows/{rowId}/cells/{groupId}/resume", {
    params: { path: { id: t, rowId: r, groupId: "g1" } },
    body,
  });

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  await useWorker(url);
  key = (await newWorkspace()).key;
});

describe("pause and resume", () => {
  it("an approval pauses the cell; a resume continues after it and the cascade goes on", async () => {
    const t = await approvalTable();
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", groupIds: ["g1"] },
    });
    const paused = await waitCell(t.id, t.rowId, "g1", "paused");
    const executionId = paused.cells.g1?.executionId as string;
    // The row lock is free while paused: no carrier waits on the approval.
    const key64 = rowLockKey(t.id, t.rowId);
    const free = await waitFor(async () => {
      // One session for try and unlock: a pooled query could unlock on another connection.
      const session = await getDatabase().pool.connect();
      try {
        const r = await session.query("select pg_try_advisory_lock($1::bigint) as got", [key64]);
        const got = r.rows[0]?.got === true;
        if (got) await session.query("select pg_advisory_unlock($1::bigint)", [key64]);
        return got;
      } finally {
        session.release();
      }
    }, 10_000);
    expect(free).toBe(true);

    const wrong = await resume(t.id, t.rowId, { executionId: "ex_not_it", data: { answer: "no" } });
    expect(wrong.response.status).toBe(409);
    const ok = await resume(t.id, t.rowId, { executionId, data: { answer: "yes" } });
    expect(ok.response.status).toBe(202);
    const done = await waitCell(t.id, t.rowId, "g2", "completed");
    expect(done.data).toMatchObject({ a: "yes", b: "YES" });
    expect(done.cells.g1).toMatchObject({ status: "completed", executionId });
    // A second resume of the same attempt finds nothing paused.
    expect((await resume(t.id, t.rowId, { executionId, data: {} })).response.status).toBe(409);
  });

  it("a Stop on a paused cell holds: it stays cancelled and cannot be resumed", async () => {
    const t = await approvalTable();
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", groupIds: ["g1"] },
    });
    const paused = await waitCell(t.id, t.rowId, "g1", "paused");
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.id } },
      body: {},
    });
    expect(dataOf(stop).cancelled).toBe(1);
    const again = await resume(t.id, t.rowId, {
      executionId: paused.cells.g1?.executionId as string,
      data: { answer: "yes" },
    });
    expect(again.response.status).toBe(409);
    expect((await getRow(t.id, t.rowId)).cells.g1?.status).toBe("cancelled");
  });

  it("an unknown cell is 404 and a malformed body 400", async () => {
    const t = await approvalTable();
    expect((await resume(t.id, t.rowId, { executionId: "ex_x" })).response.status).toBe(404);
    // A malformed body is a wrong shape: the typed client cannot send it.
    const malformed = await call("POST", `/api/tables/${t.id}/rows/${t.rowId}/cells/g1/resume`, {
      key,
      body: { data: 1 },
    });
    expect(malformed.status).toBe(400);
  });

  it("a long wait that is due resumes by itself (the re-drive, when its delayed carrier is lost)", async () => {
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        blocks: [
          { id: "nap", type: "wait", ms: 3_600_000, next: "out" },
          { id: "out", type: "transform", expression: "blocks.nap.waitedMs" },
        ],
      },
      outputs: { a: "out" },
      group: { id: "g1" },
    });
    const rowId = rowIds[0] as string;
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    await waitCell(tableId, rowId, "g1", "paused");
    // An hour is long: lose its delayed carrier and make it due now.
    await db().execute(sql`delete from graphile_worker._private_jobs`);
    await db().execute(
      sql`update executions set resume_data = jsonb_set(resume_data, '{resumeAt}', to_jsonb((extract(epoch from now()) * 1000)::bigint - 1000))
           where row_id = ${rowId}`,
    );
    const machine = {
      database: createDatabase({ url, poolMax: 3 }),
      backend: new LocalBackend(url),
    };
    try {
      const report = await redriveOrphans(redriveEngine({ ...machine, log: log() }));
      expect(report.carriers).toBeGreaterThanOrEqual(1);
    } finally {
      await machine.backend.close();
      await machine.database.close();
    }
    const done = await waitCell(tableId, rowId, "g1", "completed");
    expect(done.data.a).toBe(3_600_000);
  });
});
