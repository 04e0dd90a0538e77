/**
 * Credits: admission never overspends the month's cap, nor a run's own cap (`maxCredits`),
 * however many attempts are admitted at once, charges once per (execution, source), and a
 * halt leaves exactly one `limit` event, a halted dispatch (saying which limit) and no
 * queued cell, while running cells finish.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { admitAttempt } from "@/engine/admission";
import { startRun } from "@/engine/dispatcher";
import { planLimits } from "@/limits/plans";
import { admit } from "@/store/usage/admit";
import { apiClient, dataOf } from "../helpers/api";
import { claimNext } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
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
    sql`update workspaces set plan = 'free', credits_used = ${cap - left},
               credits_month = date_trunc('month', now() at time zone 'utc')::date
         where id = ${workspaceId}`,
  );
}

describe("admission", () => {
  it("20 attempts admitted at once against 10 credits left: exactly 10 are charged", async () => {
    const w = await newWorkspace("burst");
    await leave(w.id, 10);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        admit(db(), {
          workspaceId: w.id,
          executionId: `ex_burst_${i}`,
          source: "email_domain",
          credits: 1,
          monthlyCredits: planLimits("free").monthlyCredits,
        }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    const [ledger] = await queryRows<{ n: number; sum: number }>(
      db(),
      sql`select count(*)::int as n, coalesce(sum(credits), 0)::int as sum from usage where workspace_id = ${w.id}`,
    );
    expect(ledger).toEqual({ n: 10, sum: 10 });
    const usage = await apiClient(w.key).GET("/api/usage");
    expect(dataOf(usage)).toMatchObject({ remaining: 0, limit: planLimits("free").monthlyCredits });
  });

  it("the same execution and source is charged once, whatever the retries", async () => {
    const w = await newWorkspace("retries");
    await leave(w.id, 100);
    const charge = {
      workspaceId: w.id,
      executionId: "ex_retry",
      source: "website_meta",
      credits: 3,
      monthlyCredits: planLimits("free").monthlyCredits,
    };
    expect(await admit(db(), charge)).toEqual({ ok: true, charged: true });
    expect(await admit(db(), charge)).toEqual({ ok: true, charged: false });
    expect(await admit(db(), charge)).toEqual({ ok: true, charged: false });
    const usage = await apiClient(w.key).GET("/api/usage");
    expect(dataOf(usage).bySource).toEqual([{ source: "website_meta", credits: 3 }]);
  });
});

describe("halt", () => {
  it("many attempts hitting the limit at once: one limit event, halted run, no queued cell, running ones kept", async () => {
    await leave(ws.id, 0);
    const t = await waitTable(ws.key, { groups: 1, ms: 10, rows: 30 });
    const run = await startRun(db(), getBackend(), {
      tableId: t.id,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 30,
    });
    // No worker here: claim 6 cells by hand, as 6 carriers would.
    const cells = await queryRows<{ row_id: string; execution_id: string }>(
      db(),
      sql`select row_id, execution_id from cells where table_id = ${t.id} order by row_position limit 6`,
    );
    for (const c of cells) await claimNext(db(), { tableId: t.id, rowId: c.row_id, groupId: "g0" });
    // Four of them are admitted at once and all hit the limit; two keep running.
    const outcomes = await Promise.all(
      cells.slice(0, 4).map((c) =>
        admitAttempt(db(), {
          workspaceId: ws.id,
          plan: "free",
          tableId: t.id,
          rowId: c.row_id,
          groupId: "g0",
          attempt: 1,
          executionId: c.execution_id,
          dispatchId: run.dispatchId,
          source: "email_domain",
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

describe("a run's credit cap", () => {
  it("30 admissions of one capped run racing a concurrent charge never pass the cap", async () => {
    const w = await newWorkspace("run-cap-race");
    const t = await waitTable(w.key, { groups: 1, ms: 10, rows: 30 });
    const run = await startRun(db(), getBackend(), {
      tableId: t.id,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 30,
      maxCredits: 7,
    });
    const cells = await queryRows<{ row_id: string; execution_id: string }>(
      db(),
      sql`select row_id, execution_id from cells where table_id = ${t.id} order by row_position`,
    );
    for (const c of cells) await claimNext(db(), { tableId: t.id, rowId: c.row_id, groupId: "g0" });
    // Another admission of the run has counted 2 credits and not committed yet: every
    // admission below starts on a snapshot from before it and must wait for it. The
    // watcher has its own connection: the waiting admissions hold the pool's others.
    const blocker = await getDatabase().pool.connect();
    const watcher = await getDatabase().pool.connect();
    try {
      await blocker.query("begin");
      await blocker.query("update dispatches set credits_used = credits_used + 2 where id = $1", [
        run.dispatchId,
      ]);
      const admitting = Promise.all(
        cells.map((c) =>
          admitAttempt(db(), {
            workspaceId: w.id,
            plan: "free",
            tableId: t.id,
            rowId: c.row_id,
            groupId: "g0",
            attempt: 1,
            executionId: c.execution_id,
            dispatchId: run.dispatchId,
            source: "email_domain",
            credits: 1,
          }),
        ),
      );
      const waiting = async () => {
        const { rows } = await watcher.query(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'
              and query like 'with prior as (select 1 from usage%'`,
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
    const [used] = await queryRows<{ credits_used: number }>(
      db(),
      sql`select credits_used from dispatches where id = ${run.dispatchId}`,
    );
    expect(used?.credits_used).toBe(7);
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
