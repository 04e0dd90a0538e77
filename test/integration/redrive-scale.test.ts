/**
 * A re-drive pass reads a bounded number of candidates (1,000): rows being carried must
 * not fill that read, or an orphan behind them waits for ever, pass after pass.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { redriveOrphans } from "@/engine/redrive";
import { rowLockKey } from "@/engine/row-lock";
import { stampPage } from "@/store/cells/stamp";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, redriveEngine } from "../helpers/engine";
import { RecordingBackend } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

/** More rows in flight than a pass reads (redrive.ts PASS_LIMIT). */
const HEALTHY = 1_200;

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

describe("a re-drive pass", () => {
  it(`heals an orphan behind ${HEALTHY} rows whose carriers are alive, in one pass`, async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: HEALTHY + 1 });
    await stampPage(db(), {
      tableId: t.id,
      dispatchId: null,
      groupIds: ["g0"],
      mode: "all",
      rowIds: null,
      afterPosition: -1,
      maxRows: HEALTHY + 1,
    });
    // The orphan: the last row, its attempt the youngest, so neither the rows' order nor
    // the age of their attempts puts it first.
    const orphan = t.rowIds[HEALTHY] as string;
    const healthy = t.rowIds.slice(0, HEALTHY);
    await db().execute(
      sql`update cells set status = 'running', attempt = 1,
                 started_at = case when row_id = ${orphan} then now() else now() - interval '1 hour' end
           where table_id = ${t.id}`,
    );
    // Every other row's carrier is alive: its row lock is held, as a carrier holds it.
    const carriers = await getDatabase().pool.connect();
    try {
      const keys = healthy.map((rowId) => rowLockKey(t.id, rowId));
      const held = await carriers.query(
        "select count(pg_advisory_lock(k))::int as n from unnest($1::bigint[]) k",
        [keys],
      );
      expect(held.rows[0]?.n).toBe(HEALTHY);
      const report = await redriveOrphans(
        redriveEngine({ database: getDatabase(), backend: new RecordingBackend() }),
      );
      expect(report).toMatchObject({ requeued: 1, failed: 0 });
      const [cell] = await queryRows<{ status: string }>(
        db(),
        sql`select status::text as status from cells where row_id = ${orphan}`,
      );
      expect(cell?.status).toBe("queued");
      expect(await cellCounts(t.id)).toEqual({ running: HEALTHY, queued: 1 });
    } finally {
      await carriers.query("select pg_advisory_unlock_all()");
      carriers.release();
    }
  }, 120_000);
});
