/**
 * The table's auto-run switch (API.md "Spend control"), through the API with a worker:
 * off, no group fires by itself (inserts, CSV imports, insert webhooks, edits, the
 * carrier's cascade after a cell ends) while explicit runs and run webhooks still run; on
 * again with `backfill: "run"`, one run of mode `new` fills what never ran; with `skip`,
 * nothing starts.
 */
import { createHmac } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { ApiError } from "@/contracts/common";
import { rowLockKeyOf } from "@/store/cells/orphan-probe";
import { lockAgainstStop } from "@/store/stops/stop-lock";
import { apiClient, dataOf } from "../helpers/api";
import { someoneWaitsForALock, useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";

let key: string;
let upper: string;
let slowUpper: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  upper = await workflow(upperDefinition.blocks);
  slowUpper = await workflow([
    { id: "pause", type: "wait", ms: 1500, next: "out" },
    ...upperDefinition.blocks,
  ]);
});

/** No carrier holds these rows' locks (the key as engine/row-lock.ts makes it). */
async function rowLocksFree(tableId: string, rowIds: readonly string[]): Promise<boolean> {
  const [row] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from pg_locks l
         where l.locktype = 'advisory' and l.granted and l.objsubid = 1
           and (l.classid::bigint << 32) | l.objid::bigint in (
             select ${rowLockKeyOf(sql`${tableId}::text`, sql`r`)} from unnest(${sql.param(rowIds)}::text[]) r)`,
  );
  return row?.n === 0;
}

async function workflow(blocks: Schemas["Block"][]): Promise<string> {
  const r = await apiClient(key).POST("/api/workflows", {
    body: { name: "w", definition: { inputs: upperDefinition.inputs, blocks } },
  });
  return dataOf(r).id;
}

function group(
  id: string,
  workflowId: string,
  input: string,
  output: string,
  autoRun = true,
): Schemas["WorkflowGroup"] {
  return {
    id,
    name: id.toUpperCase(),
    kind: "workflow",
    workflowId,
    inputs: { v: input },
    outputs: [{ columnId: output, from: "out" }],
    dependsOn: [input],
    autoRun,
  };
}

/** src → (ga) → a → (gb) → b; `ga` takes 1.5 s with `slow`. */
async function chain(opts: { gaAuto?: boolean; slow?: boolean } = {}): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "switch",
      columns: ["src", "a", "b"].map((id) => ({ id, name: id, type: "text" as const })),
      groups: [
        group("ga", opts.slow ? slowUpper : upper, "src", "a", opts.gaAuto ?? true),
        group("gb", upper, "a", "b"),
      ],
    },
  });
  expect(t.response.status).toBe(201);
  return dataOf(t).id;
}

const patch = (id: string, body: Record<string, unknown>) =>
  call<Schemas["PatchedTable"]>("PATCH", `/api/tables/${id}`, { key, body });

async function cells(tableId: string): Promise<{ row: string; group: string; status: string }[]> {
  return queryRows(
    db(),
    sql`select row_id as row, group_id as group, status from cells
         where table_id = ${tableId} order by row_id, group_id`,
  );
}

async function runCount(tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from dispatches where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

async function insert(tableId: string, ...srcs: string[]): Promise<string[]> {
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: srcs.map((src) => ({ data: { src } })) },
  });
  return dataOf(ins).rows.map((r) => r.id);
}

async function rowData(tableId: string, rowId: string): Promise<Record<string, unknown>> {
  const r = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
    params: { path: { id: tableId, rowId } },
  });
  return dataOf(r).data;
}

async function waitRun(tableId: string, dispatchId: string): Promise<Schemas["RunView"]> {
  let run: Schemas["RunView"] | undefined;
  const done = await waitFor(async () => {
    const r = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId } },
    });
    run = dataOf(r);
    return run.status === "completed";
  }, 30_000);
  if (!done || !run) throw new Error(`run never completed: ${JSON.stringify(run)}`);
  return run;
}

function sign(secret: string, body: string): string {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex");
  return `t=${t},v1=${v1}`;
}

async function hook(tableId: string, action: "insert_rows" | "run") {
  const res = await apiClient(key).POST("/api/tables/{id}/hooks", {
    params: { path: { id: tableId } },
    body: { action },
  });
  const { id, secret } = dataOf(res);
  return (body: string) =>
    call<{ dispatchId?: string }>("POST", `/api/hooks/${id}`, {
      rawBody: body,
      headers: { "content-type": "application/json", "cellflow-signature": sign(secret, body) },
    });
}

describe("the table's auto-run switch", () => {
  it("is on by default and shows in the table view, the list and the patch's answer", async () => {
    const t = await chain();
    const got = await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: t } } });
    expect(dataOf(got).autoRun).toBe(true);
    const off = await patch(t, { autoRun: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: t, autoRun: false });
    expect(off.body.dispatchId).toBeUndefined();
    const list = dataOf(await apiClient(key).GET("/api/tables"));
    expect(list.tables.find((x) => x.id === t)?.autoRun).toBe(false);
    // The switch is no schema change.
    expect(off.body.schemaVersion).toBe(dataOf(got).schemaVersion);
  });

  it("each flip tells the table's open views: a schema event with the switch, in the flip's transaction", async () => {
    const t = await chain();
    const flips = async () =>
      (
        await queryRows<{ autoRun: boolean | null }>(
          getDatabase().db,
          sql`select (data->>'autoRun')::boolean as "autoRun" from events
               where table_id = ${t} and kind = 'schema' and data ? 'autoRun' order by id`,
        )
      ).map((e) => e.autoRun);
    expect(await flips()).toEqual([]);
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    expect((await patch(t, { autoRun: true, backfill: "skip" })).status).toBe(200);
    expect(await flips()).toEqual([false, true]);
    // A refused flip tells nobody.
    expect((await patch(t, { autoRun: true })).status).toBe(400);
    expect(await flips()).toEqual([false, true]);
  });

  it("backfill is required to turn it on, and goes with nothing else (400 at backfill)", async () => {
    const t = await chain();
    for (const body of [
      { autoRun: true },
      { backfill: "run" },
      { autoRun: false, backfill: "skip" },
      { autoRun: true, backfill: "later" },
    ]) {
      const res = await patch(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const issues = ApiError.parse(res.body).error.issues ?? [];
      expect(issues.map((i) => i.path)).toContain("backfill");
    }
    const gone = await patch("tbl_missing", { autoRun: false });
    expect(gone.status).toBe(404);
  });

  it("off: an insert, a CSV import, an insert webhook and an edit stamp nothing", async () => {
    const t = await chain();
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    const [inserted] = await insert(t, "ins");

    const imported = await call<{ inserted: number }>("POST", `/api/tables/${t}/import`, {
      key,
      rawBody: "src\r\ncsv\r\n",
      headers: { "content-type": "text/csv" },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBeLessThan(300);

    const insertHook = await hook(t, "insert_rows");
    const delivered = await insertHook(JSON.stringify({ rows: [{ data: { src: "hook" } }] }));
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(202);

    const edited = await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: inserted as string } },
      body: { data: { src: "edited" } },
    });
    expect(edited.response.status).toBe(200);

    expect(
      (await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: t } } })).data,
    ).toMatchObject({ rowCount: 3, autoRun: false });
    expect(await cells(t)).toEqual([]);
    expect(await runCount(t)).toBe(0);
  });

  it("off: the cascade after a cell ends does not fire the downstream group, and explicit runs and run webhooks still run", async () => {
    const t = await chain({ gaAuto: false });
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    const [r1, r2] = (await insert(t, "x", "y")) as [string, string];
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t } },
      body: { mode: "all", groupIds: ["ga"], rowIds: [r1] },
    });
    await waitRun(t, (dataOf(run) as { dispatchId: string }).dispatchId);
    const runHook = await hook(t, "run");
    const hooked = await runHook(JSON.stringify({ mode: "all", groupIds: ["ga"], rowIds: [r2] }));
    expect(hooked.status, JSON.stringify(hooked.body)).toBe(202);
    await waitRun(t, hooked.body.dispatchId as string);
    // The carrier's cascade would stamp gb right after ga's terminal write, before it lets
    // the row go: once both rows' locks are free, whatever it was going to stamp is there.
    expect(await waitFor(() => rowLocksFree(t, [r1, r2]), 30_000)).toBe(true);
    expect(await rowData(t, r1)).toEqual({ src: "x", a: "X" });
    expect(await rowData(t, r2)).toEqual({ src: "y", a: "Y" });
    expect((await cells(t)).map((c) => c.group)).toEqual(["ga", "ga"]);
  });

  it("on with backfill run: one run of mode new, answered by its dispatchId, fills what never ran", async () => {
    const t = await chain();
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    const [r1, r2] = (await insert(t, "p", "q")) as [string, string];
    expect(await cells(t)).toEqual([]);
    const on = await patch(t, { autoRun: true, backfill: "run" });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.autoRun).toBe(true);
    const dispatchId = on.body.dispatchId as string;
    expect(dispatchId).toMatch(/^run_/);
    const run = await waitRun(t, dispatchId);
    expect(run).toMatchObject({ mode: "new", groupIds: expect.arrayContaining(["ga", "gb"]) });
    expect(await runCount(t)).toBe(1);
    // ga by the run, gb by the cascade once a is filled (the switch is on again).
    for (const [id, src] of [
      [r1, "p"],
      [r2, "q"],
    ] as const) {
      const filled = await waitFor(
        async () => (await rowData(t, id)).b === src.toUpperCase(),
        30_000,
      );
      expect(filled, JSON.stringify(await rowData(t, id))).toBe(true);
    }
  });

  it("on with backfill skip: nothing starts, and what comes next fires again", async () => {
    const t = await chain();
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    const [old] = (await insert(t, "old")) as [string];
    const on = await patch(t, { autoRun: true, backfill: "skip" });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ autoRun: true });
    expect(on.body.dispatchId).toBeUndefined();
    expect(await cells(t)).toEqual([]);
    expect(await runCount(t)).toBe(0);
    const [fresh] = (await insert(t, "new")) as [string];
    expect(await waitFor(async () => (await rowData(t, fresh)).b === "NEW", 30_000)).toBe(true);
    expect(await rowData(t, old)).toEqual({ src: "old" });
  });

  it("a switch turned off while a carrier is in a cell: its cascade's auto-stamp sees it", async () => {
    const t = await chain({ slow: true });
    const [id] = (await insert(t, "mid")) as [string];
    const running = await waitFor(
      async () => (await cells(t)).some((c) => c.group === "ga" && c.status === "running"),
      30_000,
    );
    expect(running).toBe(true);
    // The probe sees the carrier's lock (so "free" below means the carrier let the row go).
    expect(await rowLocksFree(t, [id])).toBe(false);
    expect((await patch(t, { autoRun: false })).status).toBe(200);
    const done = await waitFor(async () => (await rowData(t, id)).a === "MID", 30_000);
    expect(done).toBe(true);
    expect(await waitFor(() => rowLocksFree(t, [id]), 30_000)).toBe(true);
    expect(await cells(t)).toEqual([{ row: id, group: "ga", status: "completed" }]);
  });

  it("turning it off waits for a stamp that read it on: once answered, none is still to commit", async () => {
    const t = await chain();
    let answered = false;
    let pending: Promise<unknown> | undefined;
    // What a carrier's auto-stamp and an auto-fire's creation hold while they stamp.
    await db().transaction(async (tx) => {
      await lockAgainstStop(tx, t);
      pending = patch(t, { autoRun: false }).then((r) => {
        answered = true;
        return r;
      });
      // The switch-off is held on the stop lock this transaction holds shared.
      expect(await someoneWaitsForALock()).toBe(true);
      expect(answered).toBe(false);
    });
    expect(((await pending) as { status: number }).status).toBe(200);
    expect(answered).toBe(true);
  });

  it("off in the same patch as a group added with autoRun: the new group fires nothing", async () => {
    const t = await chain({ gaAuto: false });
    await insert(t, "z");
    const got = dataOf(
      await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: t } } }),
    );
    const groups = got.groups.map((g) => (g.id === "ga" ? { ...g, autoRun: true } : g));
    const res = await patch(t, { autoRun: false, groups });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.autoRun).toBe(false);
    expect(res.body.groups.find((g) => g.id === "ga")?.autoRun).toBe(true);
    expect(await cells(t)).toEqual([]);
    expect(await runCount(t)).toBe(0);
  });
});
