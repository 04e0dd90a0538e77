/**
 * The carrier's one-statement step: the last attempt's terminal write, the claim of the
 * row's next cell and the fresh read. Each test forces the interleaving it protects.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { CellStatus } from "@/domain/statuses";
import { StepBatcher } from "@/engine/step-batcher";
import { cancelCells } from "@/store/cells/cancel";
import { rowStep, rowSteps, waitsForFlush } from "@/store/cells/row-step";
import { stampPage } from "@/store/cells/stamp";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { updateTable } from "@/store/tables/update";
import { claimNext } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

let tableId: string;
let version: number;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  const ws = await newWorkspace();
  const t = await createTable(db(), ws.id, {
    name: "steps",
    schema: { columns: [{ id: "out", name: "Out", type: "text" }], groups: [] },
  });
  tableId = t.id;
  version = t.schemaVersion;
});

/** A row with queued cells for g1 and g2; their execution ids. */
async function stampedRow(): Promise<{ rowId: string; e: Record<string, string> }> {
  const rows = await insertRows(db(), tableId, [{}]);
  const rowId = rows?.[0]?.id as string;
  await stampPage(db(), {
    tableId,
    dispatchId: null,
    groupIds: ["g1", "g2"],
    mode: "all",
    rowIds: [rowId],
    afterPosition: -1,
    maxRows: 1,
  });
  const cells = await queryRows<{ group_id: string; execution_id: string }>(
    db(),
    sql`select group_id, execution_id from cells where row_id = ${rowId}`,
  );
  return { rowId, e: Object.fromEntries(cells.map((c) => [c.group_id, c.execution_id])) };
}

async function statuses(rowId: string): Promise<Record<string, CellStatus>> {
  const cells = await queryRows<{ group_id: string; status: CellStatus }>(
    db(),
    sql`select group_id, status from cells where row_id = ${rowId}`,
  );
  return Object.fromEntries(cells.map((c) => [c.group_id, c.status]));
}

const done = (groupId: string, executionId: string) => ({
  groupId,
  ref: { executionId, attempt: 1 },
  end: {
    kind: "complete" as const,
    outcome: "ok" as const,
    finish: { blockErrors: {}, outputs: { out: `from ${groupId}` } },
  },
});

describe("a carrier's step statement", () => {
  it("claims the row's next cell in the caller's group order", async () => {
    const { rowId, e } = await stampedRow();
    const r = await rowStep(db(), {
      tableId,
      rowId,
      claim: { schemaVersion: version, order: ["g2", "g1"], runId: "run_step" },
    });
    expect(r.claimed).toEqual({
      groupId: "g2",
      executionId: e.g2,
      attempt: 1,
      dispatchId: null,
      resumable: false,
      // Since its stamp: what the metrics' stamp → running observes.
      queuedSeconds: expect.any(Number),
    });
    expect(r.claimed?.queuedSeconds).toBeGreaterThanOrEqual(0);
    expect(r.step?.queued.map((c) => c.groupId)).toEqual(["g1"]);
    expect(await statuses(rowId)).toEqual({ g1: "queued", g2: "running" });
    // The run carrying it is on the cell: a Stop cancels that run.
    const [cell] = await queryRows<{ run_id: string }>(
      db(),
      sql`select run_id from cells where row_id = ${rowId} and group_id = 'g2'`,
    );
    expect(cell?.run_id).toBe("run_step");
  });

  it("claims nothing when the schema moved past the version the order came from", async () => {
    const { rowId } = await stampedRow();
    const r = await rowStep(db(), {
      tableId,
      rowId,
      claim: { schemaVersion: version + 1, order: ["g1", "g2"], runId: "run_step" },
    });
    expect(r.claimed).toBeNull();
    expect(r.step?.queued.map((c) => c.groupId).sort()).toEqual(["g1", "g2"]);
    expect(await statuses(rowId)).toEqual({ g1: "queued", g2: "queued" });
  });

  it("leaves out the schema its caller holds, and sends it once the schema moved past that version", async () => {
    const ws = await newWorkspace();
    const schema = { columns: [{ id: "out", name: "Out", type: "text" as const }], groups: [] };
    const t = await createTable(db(), ws.id, { name: "known schema", schema });
    const rows = await insertRows(db(), t.id, [{}]);
    const rowId = rows?.[0]?.id as string;
    const read = (knownSchemaVersion?: number) =>
      rowStep(db(), {
        tableId: t.id,
        rowId,
        ...(knownSchemaVersion === undefined ? {} : { knownSchemaVersion }),
      });
    expect((await read())?.step).toMatchObject({ schemaVersion: t.schemaVersion, schema });
    expect((await read(t.schemaVersion))?.step).toMatchObject({
      schemaVersion: t.schemaVersion,
      schema: null,
    });
    const edited = {
      ...schema,
      columns: [...schema.columns, { id: "more", name: "More", type: "text" as const }],
    };
    const updated = await updateTable(db(), {
      workspaceId: ws.id,
      tableId: t.id,
      expectedVersion: t.schemaVersion,
      next: { name: "known schema", schema: edited },
    });
    expect(updated.ok).toBe(true);
    // The caller still holds the old version: it gets the new schema, and its version.
    expect((await read(t.schemaVersion))?.step).toMatchObject({
      schemaVersion: t.schemaVersion + 1,
      schema: edited,
    });
  });

  it("a Stop committed before the step wins over its claim", async () => {
    const { rowId } = await stampedRow();
    await cancelCells(db(), { tableId, rowIds: [rowId] });
    const r = await rowStep(db(), {
      tableId,
      rowId,
      claim: { schemaVersion: version, order: ["g1", "g2"], runId: "run_step" },
    });
    expect(r.claimed).toBeNull();
    expect(await statuses(rowId)).toEqual({ g1: "cancelled", g2: "cancelled" });
  });

  it("writes the finished cell's event before the claimed cell's, and reads the outputs back", async () => {
    const { rowId, e } = await stampedRow();
    expect(await claimNext(db(), { tableId, rowId, groupId: "g1" })).toMatchObject({
      executionId: e.g1,
    });
    const r = await rowStep(db(), {
      tableId,
      rowId,
      finish: done("g1", e.g1 as string),
      claim: { schemaVersion: version, order: ["g1", "g2"], runId: "run_step" },
    });
    expect(r.finished).toMatchObject({ ok: true });
    expect(r.claimed?.groupId).toBe("g2");
    expect(r.step?.data).toEqual({ out: "from g1" });
    const events = await queryRows<{ group: string; status: string }>(
      db(),
      sql`select data->>'groupId' as group, data->>'status' as status from events
           where kind = 'cell' and data->>'rowId' = ${rowId} order by seq`,
    );
    expect(events.slice(-2)).toEqual([
      { group: "g1", status: "completed" },
      { group: "g2", status: "running" },
    ]);
  });

  it("a terminal write rejected by a Stop is reported, writes no outputs, and claims nothing", async () => {
    const { rowId, e } = await stampedRow();
    await claimNext(db(), { tableId, rowId, groupId: "g1" });
    await cancelCells(db(), { tableId, rowIds: [rowId] });
    const r = await rowStep(db(), {
      tableId,
      rowId,
      finish: done("g1", e.g1 as string),
      claim: { schemaVersion: version, order: ["g1", "g2"], runId: "run_step" },
    });
    expect(r.finished).toEqual({ ok: false, reason: "cancelled" });
    expect(r.claimed).toBeNull();
    expect(r.step?.data).toEqual({});
    expect(await statuses(rowId)).toEqual({ g1: "cancelled", g2: "cancelled" });
  });
});

describe("what a step batch's commit waits for", () => {
  const finish = (charges?: { chargeId: string; source: string; milli: number }[]) => ({
    tableId,
    rowId: "r",
    finish: {
      groupId: "g1",
      ref: { executionId: "e", attempt: 1 },
      end: {
        kind: "complete" as const,
        outcome: "ok" as const,
        finish: { blockErrors: {}, ...(charges ? { charges } : {}) },
      },
    },
  });
  const claim = { tableId, rowId: "r", claim: { schemaVersion: 1, order: ["g1"], runId: null } };

  it("a batch that settles a charge waits for the WAL flush; claims and ends without one do not", () => {
    expect(waitsForFlush([claim])).toBe(false);
    expect(waitsForFlush([finish(), claim])).toBe(false);
    expect(waitsForFlush([finish([])])).toBe(false);
    expect(waitsForFlush([claim, finish([{ chargeId: "k", source: "s", milli: 5 }])])).toBe(true);
  });
});

describe("the steps of several carriers in one statement", () => {
  it("a step whose terminal write lost its race loses only that: the other rows' writes and claims land", async () => {
    const a = await stampedRow();
    const b = await stampedRow();
    const order = { schemaVersion: version, order: ["g1", "g2"], runId: "run_batch" };
    const claims = await rowSteps(db(), [
      { tableId, rowId: a.rowId, claim: order },
      { tableId, rowId: b.rowId, claim: order },
    ]);
    expect(claims.map((c) => c.claimed?.groupId)).toEqual(["g1", "g1"]);
    // A's attempt was replaced meanwhile (a re-drive requeued and re-claimed it).
    await db().execute(
      sql`update cells set attempt = attempt + 1 where row_id = ${a.rowId} and group_id = 'g1'`,
    );
    const steps = await rowSteps(db(), [
      { tableId, rowId: a.rowId, finish: done("g1", a.e.g1 as string), claim: order },
      { tableId, rowId: b.rowId, finish: done("g1", b.e.g1 as string), claim: order },
    ]);
    expect(steps[0]?.finished).toEqual({ ok: false, reason: "stale" });
    expect(steps[1]?.finished).toEqual({ ok: true });
    // A's claim is its own: its next cell is still claimed; B finished g1 and claimed g2.
    expect(steps[0]?.claimed?.groupId).toBe("g2");
    expect(steps[1]?.claimed?.groupId).toBe("g2");
    expect(await statuses(a.rowId)).toEqual({ g1: "running", g2: "running" });
    expect(await statuses(b.rowId)).toEqual({ g1: "completed", g2: "running" });
    // Only B's output reached its row; B's read has it applied.
    const data = await queryRows<{ id: string; data: Record<string, unknown> }>(
      db(),
      sql`select id, data from rows where id in (${a.rowId}, ${b.rowId})`,
    );
    expect(data.find((r) => r.id === a.rowId)?.data.out).toBeUndefined();
    expect(data.find((r) => r.id === b.rowId)?.data.out).toBe("from g1");
    expect(steps[1]?.step?.data?.out).toBe("from g1");
    // Per row, the finished cell's event comes before the claimed one's.
    const events = await queryRows<{ status: string; group_id: string }>(
      db(),
      sql`select data->>'status' as status, data->>'groupId' as group_id from events
           where kind = 'cell' and data->>'rowId' = ${b.rowId} order by id`,
    );
    expect(events.slice(-2)).toEqual([
      { status: "completed", group_id: "g1" },
      { status: "running", group_id: "g2" },
    ]);
  });

  it("steps that wait while a statement is out go together in the next one", async () => {
    const [first, ...rest] = await Promise.all([stampedRow(), stampedRow(), stampedRow()]);
    const batcher = new StepBatcher(db(), 1);
    const order = { schemaVersion: version, order: ["g1", "g2"], runId: "run_batch" };
    const step = (rowId: string) => batcher.step({ tableId, rowId, claim: order });
    const out = step(first?.rowId as string);
    // The end of the turn it was asked in sent it; its answer needs a round trip.
    await new Promise((turn) => setImmediate(turn));
    expect(batcher.stats.statements).toBe(1);
    const steps = await Promise.all([out, ...rest.map((r) => step(r.rowId))]);
    expect(steps.map((s) => s.claimed?.groupId)).toEqual(["g1", "g1", "g1"]);
    // The two that waited for it shared one statement.
    expect(batcher.stats).toEqual({ statements: 2, steps: 3, largest: 2 });
  });

  it("steps asked in the turn a statement answers go out with the ones that waited for it", async () => {
    const [a, b, c] = await Promise.all([stampedRow(), stampedRow(), stampedRow()]);
    const batcher = new StepBatcher(db(), 1);
    const order = { schemaVersion: version, order: ["g1", "g2"], runId: "run_batch" };
    const step = (rowId: string) => batcher.step({ tableId, rowId, claim: order });
    const first = step(a?.rowId as string);
    await new Promise((turn) => setImmediate(turn));
    const waited = step(b?.rowId as string);
    await first;
    // A carrier the answer released asks a few promise hops later, in the same turn.
    for (let hop = 0; hop < 10; hop++) await null;
    const asked = step(c?.rowId as string);
    await Promise.all([waited, asked]);
    expect(batcher.stats).toEqual({ statements: 2, steps: 3, largest: 2 });
  });

  it("steps asked in the same event-loop turn go in one statement, the first not alone", async () => {
    const rows = await Promise.all([stampedRow(), stampedRow(), stampedRow()]);
    const batcher = new StepBatcher(db(), 2);
    const order = { schemaVersion: version, order: ["g1", "g2"], runId: "run_batch" };
    const steps = await Promise.all(
      rows.map((r) => batcher.step({ tableId, rowId: r.rowId, claim: order })),
    );
    expect(steps.map((s) => s.claimed?.groupId)).toEqual(["g1", "g1", "g1"]);
    expect(batcher.stats).toEqual({ statements: 1, steps: 3, largest: 3 });
  });

  it("a step that breaks its statement fails alone: the steps batched with it still land", async () => {
    const rows = await Promise.all([stampedRow(), stampedRow(), stampedRow()]);
    const batcher = new StepBatcher(db(), 1);
    const order = { schemaVersion: version, order: ["g1", "g2"], runId: "run_batch" };
    await rowSteps(db(), [{ tableId, rowId: rows[1]?.rowId as string, claim: order }]);
    const broken = {
      ...done("g1", rows[1]?.e.g1 as string),
      // Not a cell outcome: the whole statement fails on it.
      end: { kind: "complete" as const, outcome: "bogus" as "ok", finish: { blockErrors: {} } },
    };
    const [first, bad, last] = await Promise.allSettled([
      batcher.step({ tableId, rowId: rows[0]?.rowId as string, claim: order }),
      batcher.step({ tableId, rowId: rows[1]?.rowId as string, finish: broken }),
      batcher.step({ tableId, rowId: rows[2]?.rowId as string, claim: order }),
    ]);
    expect(first.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    expect(last.status === "fulfilled" && last.value.claimed?.groupId).toBe("g1");
  });
});
