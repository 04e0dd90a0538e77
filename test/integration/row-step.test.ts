/**
 * The carrier's one-statement step: the last attempt's terminal write, the claim of the
 * row's next cell and the fresh read. Each test forces the interleaving it protects.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client";
import { getDatabase } from "../../db/instance";
import type { CellStatus } from "../../src/domain/statuses";
import { cancelCells } from "../../src/store/cells/cancel";
import { claimCell } from "../../src/store/cells/claim";
import { rowStep } from "../../src/store/cells/row-step";
import { stampPage } from "../../src/store/cells/stamp";
import { insertRows } from "../../src/store/rows/insert";
import { createTable } from "../../src/store/tables/create";
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
    });
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
    expect(await claimCell(db(), rowId, "g1", e.g1 as string)).toMatchObject({ ok: true });
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
    await claimCell(db(), rowId, "g1", e.g1 as string);
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
