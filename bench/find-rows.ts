/**
 * GET /rows on a big table: the first page and a deep page (90 % into the matching rows)
 * of filtered and ordered reads, through the real service and Postgres, on FIND_ROWS rows
 * (another table of the same size sits beside it, as other tenants' rows do). Then what
 * an expression index on a column's sort key could do for it, at best and as the service
 * reads, to see whether such an index pays. Figures are medians of FIND_REPEAT reads, in ms; they move
 * on a shared machine, compare them with each other.
 *
 *   node --import tsx bench/find-rows.ts          (FIND_ROWS=100000, FIND_REPEAT=7)
 *   FIND_EXPLAIN=1 also prints the plans of both pages.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Db, queryRows } from "@db/client";
import { startEmbeddedPostgres } from "@db/embedded";
import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import type { TaskBackend } from "@/backends/port";
import { log } from "@/config/log";
import type { ListRowsQuery } from "@/contracts/rows";
import type { TableSchema } from "@/contracts/table";
import type { Where } from "@/contracts/where";
import { decodeRowCursor, encodeRowCursor, rowOrder } from "@/domain/row-order";
import { checkWhere } from "@/domain/where";
import { listRows } from "@/services/rows";
import { findRowsSql } from "@/store/rows/find";
import { insertRows } from "@/store/rows/insert";
import { cursorKeySql, orderSql, sortKeySql } from "@/store/rows/order-sql";
import { whereSql } from "@/store/rows/where-sql";
import { createTable } from "@/store/tables/create";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { freePort } from "../test/helpers/processes";
import { median } from "./figures";
import { benchDatabase } from "./setup";

const ROWS = Number(process.env.FIND_ROWS ?? 100_000);
const REPEAT = Number(process.env.FIND_REPEAT ?? 7);
const EXPLAIN = process.env.FIND_EXPLAIN === "1";
const PAGE = 100;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Nothing is run: listRows never enqueues. */
const idle: TaskBackend = {
  kind: "local",
  remoteCancel: false,
  enqueue: async () => {},
  cancelRun: async () => ({ ok: true, value: "gone" }),
  close: async () => {},
};

const WORDS = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell"];

/** Deterministic pseudo-random data: a few empty and mistyped values, many ties. */
function rowData(i: number): Record<string, unknown> {
  const r = (k: number) => ((i * 2654435761 + k * 40503) >>> 0) % 1000;
  const data: Record<string, unknown> = {
    name: `${WORDS[r(1) % WORDS.length]} ${r(2)}`,
    day: new Date(Date.UTC(2020, 0, 1) + r(3) * 86_400_000 + r(4) * 60_000).toISOString(),
    tier: r(5) % 2 === 0 ? "free" : "pro",
    tags: r(6) % 3 === 0 ? [] : [WORDS[r(7) % WORDS.length]],
  };
  if (r(8) % 20 !== 0) data.n = r(9) + r(10) / 1000;
  return data;
}

function schema(workflowId: string): TableSchema {
  return {
    columns: [
      { id: "name", name: "Name", type: "text" },
      { id: "n", name: "N", type: "number" },
      { id: "day", name: "Day", type: "date" },
      { id: "tier", name: "Tier", type: "select", options: ["free", "pro"] },
      { id: "tags", name: "Tags", type: "json" },
      { id: "out", name: "Out", type: "text" },
    ],
    groups: [
      {
        id: "g",
        name: "G",
        kind: "workflow",
        workflowId,
        version: "live",
        inputs: {},
        outputs: [{ columnId: "out", from: "o" }],
        dependsOn: [],
        autoRun: false,
      },
    ],
  };
}

async function makeTable(db: Db, workspaceId: string, workflowId: string): Promise<string> {
  const table = await createTable(db, workspaceId, { name: "find", schema: schema(workflowId) });
  for (let i = 0; i < ROWS; i += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, ROWS - i) }, (_, j) => rowData(i + j));
    await insertRows(db, table.id, batch);
  }
  // A workflow's text in a number column, behind the API's checks: 1 row in 500.
  await db.execute(
    sql`update rows set data = data || '{"n": "n/a"}'::jsonb
         where table_id = ${table.id} and position % 500 = 7`,
  );
  // Cells of group g on 30 % of the rows: a third of them errored.
  await db.execute(
    sql`insert into cells (table_id, row_id, group_id, row_position, status, execution_id, error)
        select table_id, id, 'g', position,
               (case when position % 10 = 0 then 'error' else 'completed' end)::cell_status,
               'ex2_' || lpad(to_hex(position), 12, '0') || repeat('0', 20),
               case when position % 10 = 0 then 'boom' end
          from rows where table_id = ${table.id} and position % 10 in (0, 1, 2)`,
  );
  await db.execute(sql`analyze rows`);
  await db.execute(sql`analyze cells`);
  return table.id;
}

interface Scenario {
  name: string;
  where?: Where;
  orderBy?: string;
  dir?: "asc" | "desc";
}

const SCENARIOS: Scenario[] = [
  { name: "position order" },
  { name: "orderBy n (number) asc", orderBy: "n" },
  { name: "orderBy n (number) desc", orderBy: "n", dir: "desc" },
  { name: "orderBy name (text) asc", orderBy: "name" },
  { name: "orderBy day (date) desc", orderBy: "day", dir: "desc" },
  { name: "orderBy tags (json) asc", orderBy: "tags" },
  {
    name: "where name contains + orderBy n",
    where: [{ column: "name", op: "contains", value: "acme" }],
    orderBy: "n",
  },
  { name: "where n >= 900 (10 %), position", where: [{ column: "n", op: "gte", value: 900 }] },
  {
    name: "where errors in g (10 %) + orderBy n",
    where: [{ group: "g", status: "error" }],
    orderBy: "n",
  },
];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The median of REPEAT timed calls, after one untimed. */
async function repeat(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) times.push(await timed(fn));
  return median(times);
}

/** What the reads share: the table read, the service's context and the plan printer. */
interface FindBench {
  db: Db;
  tableId: string;
  tableSchema: TableSchema;
  ctx: Parameters<typeof listRows>[0];
  explainer: pg.Client;
  dialect: PgDialect;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-find-rows-"));
  fs.chmodSync(dir, 0o777);
  const server = await startEmbeddedPostgres({ dataDir: dir, port: await freePort() });
  try {
    const { database, url } = await benchDatabase(server.url);
    const db = database.db;
    const { workspaceId, workflowId, tableId } = await makeTables(db);
    const bench: FindBench = {
      db,
      tableId,
      tableSchema: schema(workflowId),
      ctx: { db, workspaceId, log: log(), backend: idle },
      explainer: await openExplainer(url),
      dialect: new PgDialect(),
    };
    say(`[find-rows] pages of ${PAGE} rows, median of ${REPEAT} reads (ms), no expression index`);
    await readsTable(bench, SCENARIOS);
    await expressionIndexAtBest(bench);
    say("[find-rows] GET /rows by n with that index in place (the service's own statements)");
    await readsTable(
      bench,
      SCENARIOS.filter((s) => s.orderBy === "n"),
    );
    if (EXPLAIN) await bench.explainer.end();
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A workspace, the workflow of group g, and two tables of ROWS rows; the second is read. */
async function makeTables(
  db: Db,
): Promise<{ workspaceId: string; workflowId: string; tableId: string }> {
  const ws = await createWorkspace(db, "find", "unlimited");
  const wf = await createWorkflow(db, ws.id, {
    name: "w",
    definition: { inputs: [], blocks: [{ id: "o", type: "transform", expression: "1" }] },
  });
  const started = performance.now();
  await makeTable(db, ws.id, wf.id); // the neighbour
  const tableId = await makeTable(db, ws.id, wf.id);
  say(
    `[find-rows] 2 tables × ${ROWS} rows in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return { workspaceId: ws.id, workflowId: wf.id, tableId };
}

/** The cursor that starts the page at 90 % of the matching rows. */
async function deepCursor(b: FindBench, s: Scenario): Promise<string | undefined> {
  const order = rowOrder(b.tableSchema, s.orderBy, s.dir ?? "asc");
  const where = s.where ? checkWhere(b.tableSchema, s.where) : { ok: true as const, value: [] };
  if (!order.ok || !where.ok) throw new Error(`bad scenario ${s.name}`);
  const column = order.value.column;
  const key: SQL | null = column ? sortKeySql(column.id, column.type) : null;
  const [count] = await queryRows<{ n: number }>(
    b.db,
    sql`select count(*)::int as n from rows r where r.table_id = ${b.tableId} and ${whereSql(where.value)}`,
  );
  const at = Math.floor((count?.n ?? 0) * 0.9);
  const [row] = await queryRows<{ k: string | boolean | null; p: number }>(
    b.db,
    sql`select ${column && key ? cursorKeySql(key, column.type) : sql`null`} as k, r.position as p
          from rows r where r.table_id = ${b.tableId} and ${whereSql(where.value)}
         order by ${orderSql(order.value, key, sql`r.position`)} offset ${at} limit 1`,
  );
  return row ? encodeRowCursor(order.value, { key: row.k, position: Number(row.p) }) : undefined;
}

/** The median time of a page read through the service. */
async function measure(b: FindBench, s: Scenario, cursor: string | undefined): Promise<number> {
  const query: ListRowsQuery = {
    limit: PAGE,
    dir: s.dir ?? "asc",
    ...(s.where ? { where: s.where } : {}),
    ...(s.orderBy ? { orderBy: s.orderBy } : {}),
    ...(cursor ? { cursor } : {}),
  };
  const read = async () => {
    const r = await listRows(b.ctx, b.tableId, query);
    if (!r.ok || r.value.rows.length === 0) throw new Error(`${s.name}: ${JSON.stringify(r)}`);
  };
  return repeat(read);
}

/**
 * Plans as the service's statements get them: the pool plans generically
 * (plan_cache_mode), which EXPLAIN with parameters would not show; auto_explain does.
 * Connected only with FIND_EXPLAIN=1.
 */
async function openExplainer(url: string): Promise<pg.Client> {
  const explainer = new pg.Client({
    connectionString: url,
    options: "-c plan_cache_mode=force_generic_plan",
  });
  if (!EXPLAIN) return explainer;
  await explainer.connect();
  explainer.on("notice", (n) => {
    for (const line of (n.message ?? "").split("\n")) say(`    ${line}`);
  });
  for (const setting of [
    "load 'auto_explain'",
    "set auto_explain.log_min_duration = 0",
    "set auto_explain.log_analyze = on",
    "set auto_explain.log_level = notice",
  ])
    await explainer.query(setting);
  return explainer;
}

async function explain(b: FindBench, s: Scenario, cursor: string | undefined): Promise<void> {
  const order = rowOrder(b.tableSchema, s.orderBy, s.dir ?? "asc");
  const where = s.where ? checkWhere(b.tableSchema, s.where) : { ok: true as const, value: [] };
  if (!order.ok || !where.ok) return;
  const after = decodeRowCursor(cursor, order.value);
  if (!after.ok) return;
  const find = { where: where.value, order: order.value, after: after.value, limit: PAGE + 1 };
  const q = b.dialect.sqlToQuery(findRowsSql(b.tableId, find));
  await b.explainer.query(q.sql, q.params);
}

/** One line per scenario: its first and its deep page. */
async function readsTable(b: FindBench, scenarios: Scenario[]): Promise<void> {
  say(`  ${"read".padEnd(44)} ${"first page".padStart(10)} ${"deep page".padStart(10)}`);
  for (const s of scenarios) {
    const first = await measure(b, s, undefined);
    const cursor = await deepCursor(b, s);
    const deep = await measure(b, s, cursor);
    say(`  ${s.name.padEnd(44)} ${first.toFixed(1).padStart(10)} ${deep.toFixed(1).padStart(10)}`);
    if (EXPLAIN) {
      say("   first page:");
      await explain(b, s, undefined);
      say("   deep page:");
      await explain(b, s, cursor);
    }
  }
}

/**
 * What an expression index could do at best: a statement without the `offset 0`
 * fence, the column id written into it (an index matches no parameter), the first and
 * a deep page of ids by n, before and after an index on exactly that expression (left in
 * place for the reads after).
 */
async function expressionIndexAtBest({ db, tableId }: FindBench): Promise<void> {
  const keyOfN = `(case when jsonb_typeof(r.data -> 'n'::text) = 'number' then (r.data -> 'n'::text)::numeric end)`;
  const [deepAt] = await queryRows<{ k: string; p: number }>(
    db,
    sql`select ${sql.raw(keyOfN)}::text as k, r.position as p from rows r
         where r.table_id = ${tableId} and ${sql.raw(keyOfN)} is not null
         order by ${sql.raw(keyOfN)}, r.position offset ${Math.floor(ROWS * 0.9)} limit 1`,
  );
  const flatFirst = sql`select r.id from rows r where r.table_id = ${tableId}
    order by ${sql.raw(keyOfN)} asc nulls last, r.position limit ${PAGE + 1}`;
  const flatDeep = sql`select r.id from rows r where r.table_id = ${tableId}
    and (${sql.raw(keyOfN)} > ${deepAt?.k}::numeric
         or (${sql.raw(keyOfN)} = ${deepAt?.k}::numeric and r.position > ${deepAt?.p}::bigint)
         or ${sql.raw(keyOfN)} is null)
    order by ${sql.raw(keyOfN)} asc nulls last, r.position limit ${PAGE + 1}`;
  const flat = async (label: string) => {
    const first = await repeat(() => queryRows(db, flatFirst));
    const deep = await repeat(() => queryRows(db, flatDeep));
    say(`  ${label.padEnd(44)} ${first.toFixed(1).padStart(10)} ${deep.toFixed(1).padStart(10)}`);
  };
  say("[find-rows] ids only by n asc, column written in, no fence: without and with an index");
  await flat("no index");
  await db.execute(
    sql.raw(
      `create index find_rows_n_key on rows (table_id, ${keyOfN.replaceAll("r.data", "data")}, position)`,
    ),
  );
  await db.execute(sql`analyze rows`);
  await flat("index on (table_id, key of n, position)");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
