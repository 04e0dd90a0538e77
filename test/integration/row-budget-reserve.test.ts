/**
 * Per-row budgets at the reservation (store/usage/reserve.ts): a reservation that would
 * take what the row's cells of the run are charged or hold reserved past the run's
 * `maxCreditsPerRow` is refused as `row_budget` — nothing reserved, the run not halted —
 * however many calls of one row reserve at once, in one cell or in several; a key
 * charged before is neither reserved again nor counted twice; a released reservation
 * gives its room back; a cell of no run (the cascade after a run's cell) counts in that
 * run's row budget; and through admission the refusal is `over_budget`, never a halt.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { admitCall } from "@/engine/admission";
import { startRun } from "@/engine/dispatcher";
import { planLimits } from "@/limits/plans";
import { stampPage } from "@/store/cells/stamp";
import type { CellAttemptRef } from "@/store/cells/transition";
import { releaseCharge } from "@/store/usage/release";
import { reserveCredits } from "@/store/usage/reserve";
import { apiClient } from "../helpers/api";
import { claimNext, completeCell } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
});

type Cell = CellAttemptRef & { tableId: string };

/** A run of `groups` groups over `rows` rows, every cell claimed (running, attempt 1). */
async function runningRow(
  key: string,
  spec: { groups: number; rows?: number; maxCreditsPerRow?: number | null },
): Promise<{ tableId: string; dispatchId: string; rows: Cell[][] }> {
  const t = await waitTable(key, { groups: spec.groups, ms: 10, rows: spec.rows ?? 1 });
  const groupIds = Array.from({ length: spec.groups }, (_, i) => `g${i}`);
  const started = await startRun(
    { db: db(), backend: getBackend() },
    {
      tableId: t.id,
      groupIds,
      mode: "all",
      rowIds: null,
      limit: null,
      window: 100,
      ...(spec.maxCreditsPerRow !== undefined ? { maxCreditsPerRow: spec.maxCreditsPerRow } : {}),
    },
  );
  const rows: Cell[][] = [];
  for (const rowId of t.rowIds) {
    const cells: Cell[] = [];
    for (const groupId of groupIds) {
      const claimed = await claimNext(db(), { tableId: t.id, rowId, groupId });
      if (!claimed) throw new Error("nothing claimed");
      cells.push({ tableId: t.id, rowId, ...claimed });
    }
    rows.push(cells);
  }
  return { tableId: t.id, dispatchId: started.dispatchId, rows };
}

const reserve = (
  workspaceId: string,
  cell: Cell,
  dispatchId: string | null,
  source: string,
  credits = 1,
) =>
  reserveCredits(db(), {
    workspaceId,
    cell,
    dispatchId,
    charge: { chargeId: cell.executionId, source },
    credits,
    monthlyCredits: planLimits("pro").monthlyCredits,
  });

async function rowHolds(dispatchId: string, rowId: string): Promise<number> {
  const [r] = await queryRows<{ m: number }>(
    db(),
    sql`select coalesce(sum(milli), 0)::int as m from usage where dispatch_id = ${dispatchId} and row_id = ${rowId}`,
  );
  return r?.m ?? -1;
}

async function runStatus(dispatchId: string): Promise<string | undefined> {
  const [r] = await queryRows<{ status: string }>(
    db(),
    sql`select status::text from dispatches where id = ${dispatchId}`,
  );
  return r?.status;
}

async function reservedMilli(workspaceId: string): Promise<number> {
  const [r] = await queryRows<{ m: number }>(
    db(),
    sql`select reserved_milli::int as m from workspaces where id = ${workspaceId}`,
  );
  return r?.m ?? -1;
}

describe("a row's budget in its run", () => {
  it("a call that would take the row past maxCreditsPerRow is refused as row_budget: nothing reserved, the run goes on", async () => {
    const w = await newWorkspace("row-budget");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 2, maxCreditsPerRow: 1.5 });
    const [a, b] = rows[0] as [Cell, Cell];
    expect(await reserve(w.id, a, dispatchId, "x", 1)).toEqual({ ok: true, reserved: true });
    // Another group of the same row: 1 + 1 > 1.5.
    expect(await reserve(w.id, b, dispatchId, "y", 1)).toEqual({ ok: false, reason: "row_budget" });
    // A fraction that fits still goes: 1 + 0.5 = 1.5.
    expect(await reserve(w.id, b, dispatchId, "z", 0.5)).toEqual({ ok: true, reserved: true });
    expect(await rowHolds(dispatchId, a.rowId)).toBe(1500);
    expect(await reservedMilli(w.id)).toBe(1500);
    expect(await runStatus(dispatchId)).toBe("active");
  });

  it("other rows of the run have budgets of their own", async () => {
    const w = await newWorkspace("row-budget-rows");
    const { dispatchId, rows } = await runningRow(w.key, {
      groups: 1,
      rows: 3,
      maxCreditsPerRow: 1,
    });
    for (const [cell] of rows as [Cell][])
      expect(await reserve(w.id, cell, dispatchId, "x", 1)).toMatchObject({ ok: true });
    expect(await reservedMilli(w.id)).toBe(3000);
  });

  it("a key charged before is not reserved again and not counted twice against the row", async () => {
    const w = await newWorkspace("row-budget-prior");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 1, maxCreditsPerRow: 1 });
    const [cell] = rows[0] as [Cell];
    expect(await reserve(w.id, cell, dispatchId, "x", 1)).toEqual({ ok: true, reserved: true });
    expect(
      await completeCell(db(), {
        ...cell,
        outcome: "ok",
        finish: { blockErrors: {}, charges: [{ chargeId: cell.executionId, source: "x" }] },
      }),
    ).toEqual({ ok: true });
    // A later attempt of the same execution (a retry, a re-drive): the row is at its budget,
    // yet the charged key passes, costing nothing more.
    await db().execute(
      sql`update cells set status = 'running', attempt = attempt + 1 where row_id = ${cell.rowId}`,
    );
    const again = { ...cell, attempt: cell.attempt + 1 };
    expect(await reserve(w.id, again, dispatchId, "x", 1)).toEqual({ ok: true, reserved: false });
    // A new key of the row is over: what was charged counts once.
    expect(await reserve(w.id, again, dispatchId, "y", 1)).toEqual({
      ok: false,
      reason: "row_budget",
    });
    expect(await rowHolds(dispatchId, cell.rowId)).toBe(1000);
  });

  it("a released reservation gives its room back", async () => {
    const w = await newWorkspace("row-budget-release");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 1, maxCreditsPerRow: 1 });
    const [cell] = rows[0] as [Cell];
    expect(await reserve(w.id, cell, dispatchId, "x", 1)).toMatchObject({ ok: true });
    expect(await reserve(w.id, cell, dispatchId, "y", 1)).toMatchObject({ reason: "row_budget" });
    await releaseCharge(db(), { cell, charge: { chargeId: cell.executionId, source: "x" } });
    expect(await reserve(w.id, cell, dispatchId, "y", 1)).toEqual({ ok: true, reserved: true });
  });

  it("a run without maxCreditsPerRow, on a table without a default, has no row budget", async () => {
    const w = await newWorkspace("row-budget-none");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 1 });
    const [cell] = rows[0] as [Cell];
    for (const source of ["x", "y", "z"])
      expect(await reserve(w.id, cell, dispatchId, source, 100)).toMatchObject({ ok: true });
  });
});

describe("reservations of one row at once", () => {
  it("10 calls of one cell (parallel blocks) reserving at once against a budget of 3: exactly 3 are reserved", async () => {
    const w = await newWorkspace("row-budget-burst");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 1, maxCreditsPerRow: 3 });
    const [cell] = rows[0] as [Cell];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => reserve(w.id, cell, dispatchId, `block${i}`, 1)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.ok && r.reason === "row_budget")).toHaveLength(7);
    expect(await rowHolds(dispatchId, cell.rowId)).toBe(3000);
    expect(await reservedMilli(w.id)).toBe(3000);
  });

  it("calls of several cells of one row reserving at once share its budget", async () => {
    const w = await newWorkspace("row-budget-cells");
    const { dispatchId, rows } = await runningRow(w.key, { groups: 4, maxCreditsPerRow: 2 });
    const cells = rows[0] as Cell[];
    const results = await Promise.all(
      cells.flatMap((c) => ["x", "y"].map((s) => reserve(w.id, c, dispatchId, s, 1))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    expect(await rowHolds(dispatchId, cells[0]?.rowId ?? "")).toBe(2000);
  });
});

describe("the table's default", () => {
  it("a run created without its own takes the table's default of that moment", async () => {
    const w = await newWorkspace("row-budget-default");
    const t = await waitTable(w.key, { groups: 1, ms: 10, rows: 1 });
    const patch = (maxCreditsPerRow: number | null) =>
      apiClient(w.key).PATCH("/api/tables/{id}", {
        params: { path: { id: t.id } },
        body: { maxCreditsPerRow },
      });
    expect((await patch(2.5)).response.status).toBe(200);
    const first = await startRun(
      { db: db(), backend: getBackend() },
      { tableId: t.id, groupIds: ["g0"], mode: "all", rowIds: null, limit: null, window: 10 },
    );
    const own = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 10,
        maxCreditsPerRow: 0.25,
      },
    );
    expect((await patch(null)).response.status).toBe(200);
    const after = await startRun(
      { db: db(), backend: getBackend() },
      { tableId: t.id, groupIds: ["g0"], mode: "all", rowIds: null, limit: null, window: 10 },
    );
    const budgets = await queryRows<{ id: string; m: number | null }>(
      db(),
      sql`select id, max_credits_per_row_milli::int as m from dispatches where table_id = ${t.id}`,
    );
    const of = (id: string) => budgets.find((b) => b.id === id)?.m;
    expect(of(first.dispatchId)).toBe(2500);
    expect(of(own.dispatchId)).toBe(250);
    expect(of(after.dispatchId)).toBeNull();
  });

  it("a cell of no run (the cascade after a run's cell) counts in that run's row budget, not in its cap", async () => {
    const w = await newWorkspace("row-budget-cascade");
    const t = await waitTable(w.key, { groups: 2, ms: 10, rows: 1 });
    const rowId = t.rowIds[0] ?? "";
    const started = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 10,
        maxCredits: 1,
        maxCreditsPerRow: 1.5,
      },
    );
    const first = await claimNext(db(), { tableId: t.id, rowId, groupId: "g0" });
    if (!first) throw new Error("nothing claimed");
    const a = { tableId: t.id, rowId, ...first };
    expect(await reserve(w.id, a, started.dispatchId, "x", 1)).toMatchObject({ ok: true });
    // As the carrier's auto-run stamps: no run, the row's newest request number.
    await stampPage(db(), {
      tableId: t.id,
      dispatchId: null,
      groupIds: ["g1"],
      mode: "new",
      rowIds: [rowId],
      afterPosition: -1,
      maxRows: 1,
    });
    const next = await claimNext(db(), { tableId: t.id, rowId, groupId: "g1" });
    if (!next) throw new Error("nothing claimed");
    const b = { tableId: t.id, rowId, ...next };
    expect(await reserve(w.id, b, null, "y", 1)).toEqual({ ok: false, reason: "row_budget" });
    // Within the row's budget it goes, though the run's own cap (1) is used up.
    expect(await reserve(w.id, b, null, "z", 0.5)).toEqual({ ok: true, reserved: true });
  });
});

describe("admission", () => {
  it("a call over the row's budget is over_budget, not a halt: the run stays active, its cells queued", async () => {
    const w = await newWorkspace("row-budget-admit");
    const { tableId, dispatchId, rows } = await runningRow(w.key, {
      groups: 1,
      rows: 2,
      maxCreditsPerRow: 1,
    });
    const [cell] = rows[0] as [Cell];
    const request = (source: string) => ({
      workspaceId: w.id,
      plan: "pro" as const,
      tableId,
      rowId: cell.rowId,
      groupId: cell.groupId,
      executionId: cell.executionId,
      attempt: cell.attempt,
      dispatchId,
      charge: { chargeId: cell.executionId, source },
      credits: 1,
    });
    expect(await admitCall(db(), request("x"))).toBe("admitted");
    expect(await admitCall(db(), request("y"))).toBe("over_budget");
    expect(await runStatus(dispatchId)).toBe("active");
    const [events] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${tableId} and kind = 'limit'`,
    );
    expect(events?.n).toBe(0);
  });
});
