/**
 * A run's credit cap in milli-credits (`dispatches.max_credits_milli`): the API takes a cap
 * with up to three decimals and shows it as given, the cap holds to the milli-credit, and the migration that moved
 * caps from whole credits carried every existing run's cap over.
 */
import fs from "node:fs";
import path from "node:path";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { MIGRATIONS_DIR } from "@db/migrate";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { startRun } from "@/engine/dispatcher";
import { reserveCredits } from "@/store/usage/reserve";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { claimNext } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
});

describe("maxCredits with decimals", () => {
  // More decimals than credits are kept to (1.0005) → 400: run-credit-cap.test.ts.
  it("the API takes 0.5 and shows it, kept as 500 milli-credits", async () => {
    const ws = await newWorkspace("cap-decimals");
    const t = await waitTable(ws.key, { groups: 1, ms: 10, rows: 1 });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", maxCredits: 0.5 },
    });
    expect(run.response.status).toBe(202);
    const dispatchId = startedRun(run).dispatchId;
    const view = dataOf(
      await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: t.id, dispatchId } },
      }),
    );
    expect(view.maxCredits).toBe(0.5);
    const [row] = await queryRows<{ milli: number }>(
      db(),
      sql`select max_credits_milli::int as milli from dispatches where id = ${dispatchId}`,
    );
    expect(row?.milli).toBe(500);
  });

  it("a cap of 0.5 holds to the milli-credit: 0.25 + 0.25 fits, one milli-credit more does not", async () => {
    const ws = await newWorkspace("cap-half");
    const t = await waitTable(ws.key, { groups: 1, ms: 10, rows: 3 });
    const { dispatchId } = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 10,
        maxCredits: 0.5,
      },
    );
    const results = [];
    for (const [rowId, credits] of [
      [t.rowIds[0], 0.25],
      [t.rowIds[1], 0.25],
      [t.rowIds[2], 0.001],
    ] as const) {
      const claimed = await claimNext(db(), { tableId: t.id, rowId: rowId ?? "", groupId: "g0" });
      if (!claimed) throw new Error("nothing claimed");
      results.push(
        await reserveCredits(db(), {
          workspaceId: ws.id,
          cell: { tableId: t.id, rowId: rowId ?? "", ...claimed },
          dispatchId,
          charge: { chargeId: claimed.executionId, source: "x" },
          credits,
          monthlyCredits: null,
        }),
      );
    }
    expect(results).toEqual([
      { ok: true, reserved: true },
      { ok: true, reserved: true },
      { ok: false, reason: "run_credit_cap" },
    ]);
  });
});

describe("the migration to milli-credit caps", () => {
  it("carries every run's whole-credit cap over, and the release keeps a capped run's total by the new column", async () => {
    const ws = await newWorkspace("cap-migration");
    const t = await waitTable(ws.key, { groups: 1, ms: 10, rows: 1 });
    // The table as it was before: caps in whole credits, the new column still empty.
    await db().execute(sql`alter table dispatches add column max_credits integer`);
    try {
      const runs: string[] = [];
      for (const cap of [5, null]) {
        const { dispatchId } = await startRun(
          { db: db(), backend: getBackend() },
          { tableId: t.id, groupIds: ["g0"], mode: "all", rowIds: null, limit: null, window: 10 },
        );
        await db().execute(
          sql`update dispatches set max_credits = ${cap}, max_credits_milli = null where id = ${dispatchId}`,
        );
        runs.push(dispatchId);
      }
      const file = fs
        .readdirSync(MIGRATIONS_DIR)
        .find((f) => f.endsWith("_run_credit_cap_milli_data.sql"));
      expect(file).toBeDefined();
      const text = fs.readFileSync(path.join(MIGRATIONS_DIR, file ?? ""), "utf8");
      for (const statement of text.split("--> statement-breakpoint"))
        await db().execute(sql.raw(statement));
      const caps = await queryRows<{ id: string; milli: number | null }>(
        db(),
        sql`select id, max_credits_milli::int as milli from dispatches where table_id = ${t.id}`,
      );
      expect(Object.fromEntries(caps.map((c) => [c.id, c.milli]))).toEqual({
        [runs[0] ?? ""]: 5_000,
        [runs[1] ?? ""]: null,
      });
      // The capped run's total: a reservation adds to it, its release takes it back.
      const claimed = await claimNext(db(), {
        tableId: t.id,
        rowId: t.rowIds[0] ?? "",
        groupId: "g0",
      });
      if (!claimed) throw new Error("nothing claimed");
      const cell = { tableId: t.id, rowId: t.rowIds[0] ?? "", ...claimed };
      const charge = { chargeId: claimed.executionId, source: "x" };
      const reserved = await reserveCredits(db(), {
        workspaceId: ws.id,
        cell,
        dispatchId: runs[0] ?? "",
        charge,
        credits: 2,
        monthlyCredits: null,
      });
      expect(reserved).toEqual({ ok: true, reserved: true });
      const committed = async () =>
        (
          await queryRows<{ m: number }>(
            db(),
            sql`select committed_milli::int as m from dispatches where id = ${runs[0] ?? ""}`,
          )
        )[0]?.m;
      expect(await committed()).toBe(2_000);
      await db().execute(
        sql`select cellflow_release_reserved(${claimed.executionId}, ${claimed.attempt}::int, ${charge.chargeId}, ${charge.source})`,
      );
      expect(await committed()).toBe(0);
    } finally {
      await db().execute(sql`alter table dispatches drop column max_credits`);
    }
  });
});
