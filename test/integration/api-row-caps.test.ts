/**
 * Rows per table by plan, through the HTTP API: every write path (insert, CSV import,
 * insert webhook) over the cap answers 402 `limit_reached` naming it and keeps nothing,
 * under it moves the table's maintained `rowCount`; deletes and bulk deletes move it
 * back; two inserts that would pass the cap together cannot (forced with a lock another
 * session holds, never with sleeps); a bulk delete stops a cell held running; the
 * migration's backfill counts the rows of tables made before the column.
 */

import { createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { MIGRATIONS_DIR } from "@db/migrate";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";
import { workflowTable } from "../helpers/tables";

// Read per request: every plan holds 5 rows per table in this file.
const CAP = 5;
process.env.CELLFLOW_ROWS_PER_TABLE = String(CAP);
process.env.CELLFLOW_SECRET_KEY = randomBytes(32).toString("base64");

const db = () => getDatabase().db;
let url: string;
let key: string;
let ep: Endpoint;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  await useWorker(url);
  key = (await newWorkspace()).key;
  ep = await startEndpoint();
});
afterAll(() => ep.close());

async function newTable(): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "capped",
      columns: [
        { id: "name", name: "Name", type: "text" },
        { id: "n", name: "N", type: "number" },
      ],
    },
  });
  return dataOf(t).id;
}

const rowsOf = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ data: { name: `r${from + i}`, n: from + i } }));

function insert(tableId: string, n: number, from = 0) {
  return apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: rowsOf(n, from) },
  });
}

/** The table's rowCount as `GET /tables/:id` and `GET /tables` show it, and a real count. */
async function counts(tableId: string): Promise<{ shown: number; listed: number; real: number }> {
  const one = dataOf(
    await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: tableId } } }),
  );
  const all = dataOf(await apiClient(key).GET("/api/tables"));
  const [real] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from rows where table_id = ${tableId}`,
  );
  return {
    shown: one.rowCount,
    listed: all.tables.find((t) => t.id === tableId)?.rowCount ?? -1,
    real: real?.n ?? -1,
  };
}

const at = (n: number) => ({ shown: n, listed: n, real: n });

function expectCapRefusal(res: { status: number; body: unknown }): string {
  expect(res.status, JSON.stringify(res.body)).toBe(402);
  const err = ApiError.parse(res.body).error;
  expect(err.code).toBe("limit_reached");
  expect(err.message).toContain(`limit of ${CAP} rows (free plan)`);
  return err.message;
}

async function importCsv(tableId: string, text: string) {
  return call<{ inserted: number }>("POST", `/api/tables/${tableId}/import`, {
    key,
    rawBody: text,
    headers: { "content-type": "text/csv" },
  });
}

const csvOf = (n: number) =>
  ["name,n", ...Array.from({ length: n }, (_, i) => `c${i},${i}`)].join("\n");

describe("inserts", () => {
  it("under the cap: kept, rowCount moved; past it: 402 naming the cap, nothing kept", async () => {
    const t = await newTable();
    expect(await counts(t)).toEqual(at(0));
    expect((await insert(t, 3)).response.status).toBe(201);
    expect(await counts(t)).toEqual(at(3));

    const over = await insert(t, 3, 3);
    const message = expectCapRefusal({ status: over.response.status, body: over.error });
    expect(message).toBe(
      "This table holds 3 rows; 3 more would pass its plan's limit of 5 rows (free plan): delete rows or upgrade",
    );
    expect(await counts(t)).toEqual(at(3));

    expect((await insert(t, 2, 3)).response.status).toBe(201);
    expect(await counts(t)).toEqual(at(CAP));
    const full = await insert(t, 1, 5);
    expect(expectCapRefusal({ status: full.response.status, body: full.error })).toBe(
      "This table is at its plan's limit of 5 rows (free plan): delete rows or upgrade",
    );
    expect(await counts(t)).toEqual(at(CAP));
  });

  it("two inserts that would pass the cap together: exactly one is kept", async () => {
    const t = await newTable();
    // Another session holds the table's row: both inserts wait on it, then go one by one.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query("select 1 from tables where id = $1 for update", [t]);
      const first = insert(t, 3);
      const second = insert(t, 3, 3);
      const bothWait = await waitFor(async () => {
        const [w] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_stat_activity
               where datname = current_database() and wait_event_type = 'Lock'
                 and query like '%next_position%'`,
        );
        return (w?.n ?? 0) >= 2;
      }, 10_000);
      expect(bothWait).toBe(true);
      await other.query("commit");
      const statuses = [(await first).response.status, (await second).response.status].sort();
      expect(statuses).toEqual([201, 402]);
    } finally {
      await other.end();
    }
    expect(await counts(t)).toEqual(at(3));
  });
});

describe("CSV import", () => {
  it("a file that would pass the cap: 402, none of its rows kept; one that fits: kept", async () => {
    const t = await newTable();
    expect((await insert(t, 2)).response.status).toBe(201);
    const over = await importCsv(t, csvOf(4));
    expect(expectCapRefusal(over)).toBe(
      "This table holds 2 rows; 4 more would pass its plan's limit of 5 rows (free plan): delete rows or upgrade",
    );
    expect(await counts(t)).toEqual(at(2));

    const fits = await importCsv(t, csvOf(3));
    expect(fits.status).toBe(201);
    expect(fits.body).toEqual({ inserted: 3 });
    expect(await counts(t)).toEqual(at(CAP));
    expectCapRefusal(await importCsv(t, csvOf(1)));
    expect(await counts(t)).toEqual(at(CAP));
  });

  it("rows that fill the table while the import waits for it: the batch's guard refuses it whole", async () => {
    const t = await newTable();
    // Holds the table's row: the import waits on it (it locks the row before it reads
    // anything), and an insert committed meanwhile fills the table.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query(
        "update tables set row_count = row_count + 4, next_position = next_position + 4 where id = $1",
        [t],
      );
      await other.query(
        `insert into rows (id, table_id, position, data)
         select 'row_other_' || g, $1, g - 1, '{}'::jsonb from generate_series(1, 4) g`,
        [t],
      );
      const imported = importCsv(t, csvOf(3));
      const waits = await waitFor(async () => {
        const [w] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_stat_activity
               where datname = current_database() and wait_event_type = 'Lock'
                 and query like '%for no key update%'`,
        );
        return (w?.n ?? 0) >= 1;
      }, 10_000);
      expect(waits).toBe(true);
      await other.query("commit");
      expect(expectCapRefusal(await imported)).toBe(
        "This table holds 4 rows; 3 more would pass its plan's limit of 5 rows (free plan): delete rows or upgrade",
      );
    } finally {
      await other.end();
    }
    expect(await counts(t)).toEqual(at(4));
  });
});

describe("insert webhooks", () => {
  const now = () => Math.floor(Date.now() / 1000);
  function sign(secret: string, body: string): string {
    const t = now();
    return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex")}`;
  }

  it("a delivery that would pass the cap: 402, nothing kept nor recorded", async () => {
    const t = await newTable();
    const hook = dataOf(
      await apiClient(key).POST("/api/tables/{id}/hooks", {
        params: { path: { id: t } },
        body: { action: "insert_rows" },
      }),
    );
    const deliver = (n: number) => {
      const body = JSON.stringify({ rows: rowsOf(n) });
      return call("POST", `/api/hooks/${hook.id}`, {
        rawBody: body,
        headers: {
          "content-type": "application/json",
          "cellflow-signature": sign(hook.secret, body),
        },
      });
    };
    expect((await deliver(4)).status).toBe(202);
    expect(await counts(t)).toEqual(at(4));
    expectCapRefusal(await deliver(2));
    expect(await counts(t)).toEqual(at(4));
    const [recorded] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from hook_deliveries where hook_id = ${hook.id}`,
    );
    expect(recorded?.n).toBe(1);
  });
});

describe("deletes", () => {
  it("a row delete moves rowCount back, and makes room", async () => {
    const t = await newTable();
    const rows = dataOf(await insert(t, CAP)).rows;
    const del = await apiClient(key).DELETE("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: rows[0]?.id ?? "" } },
    });
    expect(del.response.status).toBe(204);
    expect(await counts(t)).toEqual(at(CAP - 1));
    expect((await insert(t, 1)).response.status).toBe(201);
    expect(await counts(t)).toEqual(at(CAP));
  });

  it("a bulk delete by rowIds deletes those (ignoring ids not in the table) and moves rowCount", async () => {
    const t = await newTable();
    const rows = dataOf(await insert(t, CAP)).rows;
    const res = await apiClient(key).POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: t } },
      body: { rowIds: [rows[0]?.id ?? "", rows[2]?.id ?? "", rows[2]?.id ?? "", "row_nope"] },
    });
    expect(dataOf(res)).toEqual({ deleted: 2 });
    expect(await counts(t)).toEqual(at(CAP - 2));
    const left = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", { params: { path: { id: t } } }),
    ).rows.map((r) => r.id);
    expect(left).toEqual([rows[1]?.id, rows[3]?.id, rows[4]?.id]);
  });

  it("a bulk delete by where deletes the matching rows and moves rowCount", async () => {
    const t = await newTable();
    dataOf(await insert(t, CAP));
    const res = await apiClient(key).POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: t } },
      body: { where: [{ column: "n", op: "gte", value: 2 }] },
    });
    expect(dataOf(res)).toEqual({ deleted: 3 });
    expect(await counts(t)).toEqual(at(2));
    const left = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", { params: { path: { id: t } } }),
    ).rows.map((r) => r.data.n);
    expect(left).toEqual([0, 1]);
    const bad = await apiClient(key).POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: t } },
      body: { where: [{ column: "nope", op: "eq", value: 1 }] },
    });
    expect(bad.response.status).toBe(400);
    expect(await counts(t)).toEqual(at(2));
  });

  it("a bulk delete stops a cell held running: its attempt is aborted and writes nothing", async () => {
    ep.on("/hang", async () => "hang");
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        blocks: [
          { id: "call", type: "http", method: "GET", url: `${ep.url}/hang`, timeoutMs: 120_000 },
        ],
      },
      outputs: { out: "call" },
      rows: [{}, {}],
    });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    expect(await waitFor(() => ep.hitsOf("/hang").length === 2, 30_000)).toBe(true);
    const res = await apiClient(key).POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: tableId } },
      body: { rowIds: [rowIds[0] ?? ""] },
    });
    expect(dataOf(res)).toEqual({ deleted: 1 });
    // Its request is closed by the stop (the block's own timeout is two minutes away);
    // the other row's is still waiting.
    expect(await waitFor(() => ep.hitsOf("/hang").some((h) => h.aborted), 10_000)).toBe(true);
    expect(ep.hitsOf("/hang").filter((h) => h.aborted)).toHaveLength(1);
    const [cells] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from cells where row_id = ${rowIds[0] ?? ""}`,
    );
    expect(cells?.n).toBe(0);
    // The other row goes the same way, which ends the run.
    const rest = await apiClient(key).POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: tableId } },
      body: { where: [{ group: "g", status: "running" }] },
    });
    expect(dataOf(rest)).toEqual({ deleted: 1 });
    expect(await waitFor(() => ep.hitsOf("/hang").every((h) => h.aborted), 10_000)).toBe(true);
    expect(await counts(tableId)).toEqual(at(0));
  });
});

describe("GET /api/usage", () => {
  it("shows the plan's rows per table, and the deployment's override", async () => {
    const usage = dataOf(await apiClient(key).GET("/api/usage"));
    expect(usage.limits).toEqual({ rowsPerTable: CAP });
    delete process.env.CELLFLOW_ROWS_PER_TABLE;
    try {
      const plan = dataOf(await apiClient(key).GET("/api/usage"));
      expect(plan.limits).toEqual({ rowsPerTable: 50_000 });
    } finally {
      process.env.CELLFLOW_ROWS_PER_TABLE = String(CAP);
    }
  });
});

describe("the migration's backfill", () => {
  it("counts the rows of tables that were there before the column", async () => {
    const t = await newTable();
    dataOf(await insert(t, 3));
    const empty = await newTable();
    const file = fs
      .readdirSync(MIGRATIONS_DIR)
      .find((f) => f.endsWith("_table_row_count_backfill.sql"));
    const text = fs.readFileSync(path.join(MIGRATIONS_DIR, file ?? ""), "utf8");
    // The database as it was when the column came: every table at its default, 0.
    await db().execute(sql`update tables set row_count = 0 where id in (${t}, ${empty})`);
    expect((await counts(t)).shown).toBe(0);
    await db().execute(sql.raw(text));
    expect(await counts(t)).toEqual(at(3));
    expect(await counts(empty)).toEqual(at(0));
  });
});
