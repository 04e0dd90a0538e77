/**
 * Credits: a reservation never passes the month's cap, nor a run's own cap (`maxCredits`),
 * however many calls reserve at once, counting what is charged plus what is reserved; a
 * charge key is charged once; a reservation is charged only by the fenced write that
 * records the answer and given back by every other end of its attempt; and a halt leaves
 * exactly one `limit` event, a halted dispatch (saying which limit) and no queued cell,
 * while running cells finish.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import type { ChargeKey } from "@/domain/charges";
import { admitCall } from "@/engine/admission";
import { startRun } from "@/engine/dispatcher";
import { planLimits } from "@/limits/plans";
import { cancelCells } from "@/store/cells/cancel";
import { failCell } from "@/store/cells/finish";
import { requeueCell } from "@/store/cells/requeue";
import { stampPage } from "@/store/cells/stamp";
import type { CellAttemptRef } from "@/store/cells/transition";
import { haltForLimit } from "@/store/dispatches/halt";
import { recordStep } from "@/store/execution-steps/record";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { releaseCharge } from "@/store/usage/release";
import { reserveCredits } from "@/store/usage/reserve";
import { apiClient, dataOf } from "../helpers/api";
import { claimNext, completeCell } from "../helpers/cells";
import { someoneWaitsForALock, useTestDatabase } from "../helpers/db";
import { cellCounts } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

const db = () => getDatabase().db;
let ws: { id: string; key: string };

beforeAll(async () => {
  await useTestDatabase();
  ws = await newWorkspace();
});

/** Leaves `left` credits of the free plan's month. */
async function leave(workspaceId: string, left: number): Promise<void> {
  const cap = planLimits("free").monthlyCredits ?? 0;
  await db().execute(
    sql`update workspaces set plan = 'free', used_milli = ${(cap - left) * 1000},
               credits_month = date_trunc('month', now() at time zone 'utc')::date
         where id = ${workspaceId}`,
  );
}

/** `n` cells of a one-group table, each claimed through a row step (running, attempt 1). */
async function runningCells(
  key: string,
  n: number,
  run?: { maxCredits?: number },
): Promise<{
  tableId: string;
  dispatchId: string;
  cells: (CellAttemptRef & { tableId: string })[];
}> {
  const t = await waitTable(key, { groups: 1, ms: 10, rows: n });
  const started = await startRun(
    { db: db(), backend: getBackend() },
    {
      tableId: t.id,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: n,
      ...(run?.maxCredits !== undefined ? { maxCredits: run.maxCredits } : {}),
    },
  );
  const rows = await queryRows<{ row_id: string }>(
    db(),
    sql`select row_id from cells where table_id = ${t.id} order by row_position`,
  );
  const cells = [];
  for (const r of rows) {
    const claimed = await claimNext(db(), { tableId: t.id, rowId: r.row_id, groupId: "g0" });
    if (!claimed) throw new Error("nothing claimed");
    cells.push({ tableId: t.id, rowId: r.row_id, ...claimed });
  }
  return { tableId: t.id, dispatchId: started.dispatchId, cells };
}

const reserveFor = (
  workspaceId: string,
  cell: CellAttemptRef & { tableId: string },
  dispatchId: string | null,
  credits = 1,
  source = "email_domain",
) =>
  reserveCredits(db(), {
    workspaceId,
    cell,
    dispatchId,
    charge: { chargeId: cell.executionId, source },
    credits,
    monthlyCredits: planLimits("free").monthlyCredits,
  });

async function ledger(workspaceId: string): Promise<{ state: string; milli: number }[]> {
  return queryRows<{ state: string; milli: number }>(
    db(),
    sql`select state::text, milli::int from usage where workspace_id = ${workspaceId} order by id`,
  );
}

async function counters(workspaceId: string): Promise<{ used: number; reserved: number }> {
  const [row] = await queryRows<{ used: number; reserved: number }>(
    db(),
    sql`select used_milli::int as used, reserved_milli::int as reserved from workspaces where id = ${workspaceId}`,
  );
  return row ?? { used: -1, reserved: -1 };
}

describe("reservations", () => {
  it("20 calls reserving at once against 10 credits left: exactly 10 are reserved", async () => {
    const w = await newWorkspace("burst");
    await leave(w.id, 10);
    const { cells } = await runningCells(w.key, 20);
    const results = await Promise.all(cells.map((c) => reserveFor(w.id, c, null)));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.reason === "monthly_credits")).toHaveLength(10);
    expect(await ledger(w.id)).toHaveLength(10);
    expect(await counters(w.id)).toMatchObject({ reserved: 10_000 });
    // Reserved credits are spoken for: nothing remains, though nothing was charged.
    const usage = dataOf(await apiClient(w.key).GET("/api/usage"));
    expect(usage).toMatchObject({ reserved: 10, remaining: 0 });
    expect(usage.used).toBe((planLimits("free").monthlyCredits ?? 0) - 10);
  });

  it("a charge key is reserved once and, once charged, never again", async () => {
    const w = await newWorkspace("retries");
    await leave(w.id, 100);
    const { cells } = await runningCells(w.key, 1);
    const cell = cells[0] as (typeof cells)[number];
    expect(await reserveFor(w.id, cell, null, 3)).toEqual({ ok: true, reserved: true });
    const won = await completeCell(db(), {
      ...cell,
      outcome: "ok",
      finish: {
        blockErrors: {},
        charges: [{ chargeId: cell.executionId, source: "email_domain" }],
      },
    });
    expect(won).toEqual({ ok: true });
    expect(await ledger(w.id)).toEqual([{ state: "charged", milli: 3000 }]);
    // A later attempt of the same execution (a retry, a re-drive) pays nothing more.
    await db().execute(
      sql`update cells set status = 'running', attempt = attempt + 1 where row_id = ${cell.rowId}`,
    );
    const again = await reserveFor(w.id, { ...cell, attempt: cell.attempt + 1 }, null, 3);
    expect(again).toEqual({ ok: true, reserved: false });
    const usage = dataOf(await apiClient(w.key).GET("/api/usage"));
    expect(usage.bySource).toEqual([{ source: "email_domain", credits: 3 }]);
    expect(usage.reserved).toBe(0);
  });

  it("an attempt that no longer holds its cell reserves nothing", async () => {
    const w = await newWorkspace("lost");
    await leave(w.id, 100);
    const { tableId, cells } = await runningCells(w.key, 1);
    const cell = cells[0] as (typeof cells)[number];
    await cancelCells(db(), { tableId });
    expect(await reserveFor(w.id, cell, null)).toEqual({ ok: false, reason: "lost" });
    expect(await ledger(w.id)).toEqual([]);
    expect(await counters(w.id)).toMatchObject({ reserved: 0 });
  });
});

describe("settling", () => {
  it("only the terminal write that wins its fence charges; a lost one leaves nothing charged or reserved", async () => {
    const w = await newWorkspace("settle");
    await leave(w.id, 100);
    const { tableId, cells } = await runningCells(w.key, 2);
    const [a, b] = cells as [(typeof cells)[number], (typeof cells)[number]];
    for (const c of cells) expect(await reserveFor(w.id, c, null, 5)).toMatchObject({ ok: true });
    // b is stopped while its answer is on the way: its write loses.
    await cancelCells(db(), { tableId, rowIds: [b.rowId] });
    const charges = (c: typeof a) => [{ chargeId: c.executionId, source: "email_domain" }];
    const finish = (c: typeof a) =>
      completeCell(db(), { ...c, outcome: "ok", finish: { blockErrors: {}, charges: charges(c) } });
    expect(await finish(a)).toEqual({ ok: true });
    expect(await finish(b)).toEqual({ ok: false, reason: "cancelled" });
    expect(await ledger(w.id)).toEqual([{ state: "charged", milli: 5000 }]);
    expect(await counters(w.id)).toMatchObject({ reserved: 0 });
    const [spent] = await queryRows<{ used: number }>(
      db(),
      sql`select used_milli::int as used from workspaces where id = ${w.id}`,
    );
    expect(spent?.used).toBe((planLimits("free").monthlyCredits ?? 0) * 1000 - 100_000 + 5000);
  });

  // A block's checkpoint (the cell's own workflow) and a step record (a block inside a child).
  const recorders = {
    "a block's checkpoint": (cell: CellAttemptRef & { tableId: string }, charges: ChargeKey[]) =>
      writeCheckpoint(db(), cell, "lookup", { output: { name: "Acme" }, taken: [] }, charges),
    "a child block's step record": (
      cell: CellAttemptRef & { tableId: string },
      charges: ChargeKey[],
    ) =>
      recordStep(
        db(),
        cell,
        {
          scope: `${cell.executionId}:inner`,
          key: "lookup",
          digest: "d",
          output: { name: "Acme" },
          taken: [],
          retryOnResume: false,
        },
        undefined,
        charges,
      ),
  };
  const recordedCount = async (cell: CellAttemptRef) => {
    const [r] = await queryRows<{ n: number }>(
      db(),
      sql`select (select count(*) from executions where id = ${cell.executionId} and checkpoints ? 'lookup')
               + (select count(*) from execution_steps where execution_id = ${cell.executionId})::int as n`,
    );
    return Number(r?.n);
  };

  for (const [what, record] of Object.entries(recorders)) {
    it(`${what} racing a Stop records its answer only with its charge: both or neither`, async () => {
      const w = await newWorkspace("record-stop");
      await leave(w.id, 100);
      const { tableId, cells } = await runningCells(w.key, 1);
      const cell = cells[0] as (typeof cells)[number];
      const source = "company_lookup@lookup";
      expect(await reserveFor(w.id, cell, null, 5, source)).toMatchObject({ ok: true });
      // The Stop has cancelled the cell (its release trigger took the reservation) and not
      // committed yet when the answer's record is written.
      let commit = () => {};
      const held = new Promise<void>((r) => {
        commit = r;
      });
      let cancelled = () => {};
      const stopped = new Promise<void>((r) => {
        cancelled = r;
      });
      const stop = db().transaction(async (tx) => {
        await cancelCells(tx, { tableId, rowIds: [cell.rowId] });
        cancelled();
        await held;
      });
      await stopped;
      const written = record(cell, [{ chargeId: cell.executionId, source }]);
      expect(await someoneWaitsForALock()).toBe(true);
      commit();
      await stop;
      // The Stop won: the attempt no longer held its cell, so nothing was recorded.
      expect(await written).toBe(false);
      expect(await recordedCount(cell)).toBe(0);
      expect(await ledger(w.id)).toEqual([]);
      expect(await counters(w.id)).toMatchObject({ reserved: 0 });
    });
  }

  it("a completed write without the key (nothing found) releases what the attempt reserved", async () => {
    const w = await newWorkspace("miss");
    await leave(w.id, 100);
    const { cells } = await runningCells(w.key, 1);
    const cell = cells[0] as (typeof cells)[number];
    await reserveFor(w.id, cell, null, 5);
    await completeCell(db(), { ...cell, outcome: "not_found", finish: { blockErrors: {} } });
    expect(await ledger(w.id)).toEqual([]);
    expect(await counters(w.id)).toMatchObject({ reserved: 0 });
  });

  it("every other end of the attempt gives its reservation back: requeue, Stop, re-stamp, delete, error", async () => {
    const w = await newWorkspace("ends");
    await leave(w.id, 100);
    const { tableId, dispatchId, cells } = await runningCells(w.key, 5, { maxCredits: 50 });
    const [requeued, stopped, restamped, deleted, failed] = cells as [
      (typeof cells)[number],
      (typeof cells)[number],
      (typeof cells)[number],
      (typeof cells)[number],
      (typeof cells)[number],
    ];
    for (const c of cells)
      expect(await reserveFor(w.id, c, dispatchId, 2)).toMatchObject({ ok: true });
    expect(await counters(w.id)).toMatchObject({ reserved: 10_000 });
    const committed = async () => {
      const [row] = await queryRows<{ m: number }>(
        db(),
        sql`select committed_milli::int as m from dispatches where id = ${dispatchId}`,
      );
      return row?.m;
    };
    expect(await committed()).toBe(10_000);
    await requeueCell(db(), requeued, "lost");
    await cancelCells(db(), { tableId, rowIds: [stopped.rowId] });
    await stampPage(db(), {
      tableId,
      dispatchId: null,
      groupIds: ["g0"],
      mode: "all",
      rowIds: [restamped.rowId],
      afterPosition: -1,
      maxRows: 1,
    });
    await db().execute(sql`delete from rows where id = ${deleted.rowId}`);
    await failCell(db(), { ...failed, message: "boom", finish: { blockErrors: {} } });
    expect(await ledger(w.id)).toEqual([]);
    expect(await counters(w.id)).toMatchObject({ reserved: 0 });
    expect(await committed()).toBe(0);
  });
});

describe("a release races a Stop", () => {
  /** A connection of its own that begins, cancels the cell (its trigger releases) and waits. */
  async function stopHeldOpen(cell: CellAttemptRef) {
    const blocker = await getDatabase().pool.connect();
    await blocker.query("begin");
    await blocker.query(
      "update cells set status = 'cancelled', updated_at = now() where row_id = $1 and group_id = $2",
      [cell.rowId, cell.groupId],
    );
    return blocker;
  }

  it("an attempt's own release racing the Stop's trigger takes its run's counter back once", async () => {
    const w = await newWorkspace("release-vs-stop");
    await leave(w.id, 100);
    const { dispatchId, cells } = await runningCells(w.key, 1, { maxCredits: 50 });
    const cell = cells[0] as (typeof cells)[number];
    expect(await reserveFor(w.id, cell, dispatchId, 5)).toMatchObject({ ok: true });
    const blocker = await stopHeldOpen(cell);
    const releasing = releaseCharge(db(), {
      cell,
      charge: { chargeId: cell.executionId, source: "email_domain" },
    });
    try {
      expect(await someoneWaitsForALock()).toBe(true);
    } finally {
      await blocker.query("commit");
      blocker.release();
    }
    await releasing;
    const [run] = await queryRows<{ m: number }>(
      db(),
      sql`select committed_milli::int as m from dispatches where id = ${dispatchId}`,
    );
    expect(run?.m).toBe(0);
    expect(await counters(w.id)).toMatchObject({ reserved: 0 });
  });
});

describe("halt", () => {
  it("many attempts hitting the limit at once: one limit event, halted run, no queued cell, running ones kept", async () => {
    await leave(ws.id, 0);
    const t = await waitTable(ws.key, { groups: 1, ms: 10, rows: 30 });
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 30,
      },
    );
    // No worker here: claim 6 cells by hand, as 6 carriers would.
    const rows = await queryRows<{ row_id: string }>(
      db(),
      sql`select row_id from cells where table_id = ${t.id} order by row_position limit 6`,
    );
    const cells = [];
    for (const r of rows) {
      const claimed = await claimNext(db(), { tableId: t.id, rowId: r.row_id, groupId: "g0" });
      if (claimed) cells.push({ rowId: r.row_id, ...claimed });
    }
    // Four of them are admitted at once and all hit the limit; two keep running.
    const outcomes = await Promise.all(
      cells.slice(0, 4).map((c) =>
        admitCall(db(), {
          workspaceId: ws.id,
          plan: "free",
          tableId: t.id,
          rowId: c.rowId,
          groupId: "g0",
          attempt: c.attempt,
          executionId: c.executionId,
          dispatchId: run.dispatchId,
          charge: { chargeId: c.executionId, source: "email_domain" },
          credits: 1,
        }),
      ),
    );
    expect(outcomes).toEqual(["halted", "halted", "halted", "halted"]);
    const [limits] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t.id} and kind = 'limit'`,
    );
    expect(limits?.n).toBe(1);
    expect(await cellCounts(t.id)).toEqual({ running: 2 });
    const view = await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: t.id, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view).status).toBe("halted");
    expect(dataOf(view).haltReason).toBe("monthly_credits");
    const [event] = await queryRows<{ data: Record<string, unknown> }>(
      db(),
      sql`select data from events where table_id = ${t.id} and kind = 'limit'`,
    );
    expect(event?.data).toMatchObject({ reason: "credits", haltReason: "monthly_credits" });
    const [ledger] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from usage where workspace_id = ${ws.id}`,
    );
    expect(ledger?.n).toBe(0);
  });
});

describe("a halt racing a page of its run", () => {
  it("a halt that waited for a page being stamped unstamps that page's cells too", async () => {
    const w = await newWorkspace("halt-vs-page");
    const t = await waitTable(w.key, { groups: 1, ms: 10, rows: 2 });
    const rows = await queryRows<{ id: string; position: number }>(
      db(),
      sql`select id, position::int from rows where table_id = ${t.id} order by position`,
    );
    const [first, second] = rows as [(typeof rows)[number], (typeof rows)[number]];
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: [first.id],
        limit: null,
        window: 2,
      },
    );
    const claimed = await claimNext(db(), { tableId: t.id, rowId: first.id, groupId: "g0" });
    if (!claimed) throw new Error("nothing claimed");
    // A page of the run, not committed yet: it holds the run's row and stamps the second row.
    const page = await getDatabase().pool.connect();
    await page.query("begin");
    await page.query("update dispatches set updated_at = now() where id = $1", [run.dispatchId]);
    await page.query(
      `insert into cells (table_id, row_id, group_id, row_position, status, execution_id, dispatch_id, queued_at)
       values ($1, $2, 'g0', $3, 'queued', 'ex_page', $4, now())`,
      [t.id, second.id, second.position, run.dispatchId],
    );
    const halting = haltForLimit(db(), {
      dispatchId: run.dispatchId,
      tableId: t.id,
      own: {
        rowId: first.id,
        groupId: "g0",
        executionId: claimed.executionId,
        attempt: claimed.attempt,
      },
    });
    try {
      expect(await someoneWaitsForALock()).toBe(true);
    } finally {
      await page.query("commit");
      page.release();
    }
    expect(await halting).toEqual({ halted: true, unstamped: 1 });
    // Nothing of the halted run is left queued: its page's cell went back to un-run too.
    expect(await cellCounts(t.id)).toEqual({});
  });
});

describe("a run's credit cap", () => {
  it("30 admissions of one capped run racing a concurrent charge never pass the cap", async () => {
    const w = await newWorkspace("run-cap-race");
    const t = await waitTable(w.key, { groups: 1, ms: 10, rows: 30 });
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 30,
        maxCredits: 7,
      },
    );
    const rows = await queryRows<{ row_id: string }>(
      db(),
      sql`select row_id from cells where table_id = ${t.id} order by row_position`,
    );
    const cells = [];
    for (const r of rows) {
      const claimed = await claimNext(db(), { tableId: t.id, rowId: r.row_id, groupId: "g0" });
      if (claimed) cells.push({ rowId: r.row_id, ...claimed });
    }
    // Another admission of the run has counted 2 credits and not committed yet: every
    // admission below starts on a snapshot from before it and must wait for it. The
    // watcher has its own connection: the waiting admissions hold the pool's others.
    const blocker = await getDatabase().pool.connect();
    const watcher = await getDatabase().pool.connect();
    try {
      await blocker.query("begin");
      await blocker.query(
        "update dispatches set committed_milli = committed_milli + 2000 where id = $1",
        [run.dispatchId],
      );
      const admitting = Promise.all(
        cells.map((c) =>
          admitCall(db(), {
            workspaceId: w.id,
            plan: "free",
            tableId: t.id,
            rowId: c.rowId,
            groupId: "g0",
            attempt: c.attempt,
            executionId: c.executionId,
            dispatchId: run.dispatchId,
            charge: { chargeId: c.executionId, source: "email_domain" },
            credits: 1,
          }),
        ),
      );
      const waiting = async () => {
        const { rows } = await watcher.query(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'
              and query like 'with prior as (%select 1 from usage%'`,
        );
        return Number(rows[0]?.n ?? 0) >= 10;
      };
      expect(await waitFor(waiting, 20_000)).toBe(true);
      await blocker.query("commit");
      const outcomes = await admitting;
      expect(outcomes.filter((o) => o === "admitted")).toHaveLength(5);
    } finally {
      blocker.release();
      watcher.release();
    }
    const [used] = await queryRows<{ committed: number }>(
      db(),
      sql`select committed_milli::int as committed from dispatches where id = ${run.dispatchId}`,
    );
    expect(used?.committed).toBe(7000);
    const [ledger] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from usage where workspace_id = ${w.id}`,
    );
    expect(ledger?.n).toBe(5);
    const [limits] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t.id} and kind = 'limit'`,
    );
    expect(limits?.n).toBe(1);
    const view = await apiClient(w.key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: t.id, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view)).toMatchObject({ status: "halted", haltReason: "run_credit_cap" });
    // The admitted five keep running; the refused ones went back to un-run.
    expect(await cellCounts(t.id)).toEqual({ running: 5 });
  });
});
