/**
 * W6's reads at a million rows: the grid's pages (`GET /rows` through its service call,
 * what the route does) and the CSV export (`GET /export`'s stream, drained here).
 *
 * The grid once read every row of its filter and sort, a page of 1,000 after another, so
 * "jump to the last row" was the whole walk; it now holds a window of pages and reads the
 * last one from the end (src/ui/grid/use-row-reads.ts, `from=end`; timed in the browser
 * by `npm run test:scale`). The walk stays here as the cost of reading everything. The walk in position order is timed whole (up to
 * the limit); in a column's order each page sorts the whole table again, so two pages are
 * timed and the walk extrapolated from them. The keyset read of the last page alone
 * (what a jump would cost with keyset paging) and the same page by OFFSET are timed too.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { ListRowsQuery } from "@/contracts/rows";
import { TableSchema } from "@/contracts/table";
import { encodeRowCursor, rowOrder } from "@/domain/row-order";
import { checkWhere } from "@/domain/where";
import type { ServiceContext } from "@/services/context";
import { exportCsv } from "@/services/csv";
import { listRows } from "@/services/rows";
import { findRowsSql } from "@/store/rows/find";
import { rowSelect } from "@/store/rows/read";
import { extrapolateMs } from "./w6-figures";

const PAGE = 1_000;

type Query = { orderBy?: string; where?: unknown[] };

async function page(ctx: ServiceContext, tableId: string, q: Query, cursor?: string) {
  const query = ListRowsQuery.parse({ limit: PAGE, ...q, ...(cursor ? { cursor } : {}) });
  const t0 = performance.now();
  const r = await listRows(ctx, tableId, query);
  if (!r.ok) throw new Error(`GET /rows failed: ${JSON.stringify(r.reason)}`);
  return { ms: performance.now() - t0, rows: r.value.rows.length, next: r.value.nextCursor };
}

export interface GridFigures {
  firstPageMs: number;
  /** The whole walk in position order (the grid's "last row"), or where the limit cut it. */
  walk: { pages: number; ms: number; complete: boolean; slowestPageMs: number };
  lastPageKeysetMs: number;
  lastPageOffsetMs: number;
  sortNumber: { firstPageMs: number; secondPageMs: number; walkEstimateMs: number };
  sortText: { firstPageMs: number; secondPageMs: number; walkEstimateMs: number };
  filterNumber: { firstPageMs: number; rows: number };
  filterText: { firstPageMs: number; rows: number };
  slowest: string;
  explain: string[];
}

export async function gridReads(
  ctx: ServiceContext,
  tableId: string,
  rows: number,
  limitMs: number,
): Promise<GridFigures> {
  const first = await page(ctx, tableId, {});
  const walkStart = performance.now();
  let cursor: string | null = first.next;
  let pages = 1;
  let slowest = first.ms;
  while (cursor && performance.now() - walkStart < limitMs) {
    const p = await page(ctx, tableId, {}, cursor);
    slowest = Math.max(slowest, p.ms);
    pages++;
    cursor = p.next;
  }
  const walkMs = performance.now() - walkStart + first.ms;

  // The last page straight from a keyset cursor, and the same rows by OFFSET.
  const last = encodeRowCursor({ column: null, dir: "asc" }, { key: null, position: rows - PAGE });
  const keyset = await page(ctx, tableId, {}, last);
  const t0 = performance.now();
  await queryRows(
    ctx.db,
    sql`select ${rowSelect} from rows r where r.table_id = ${tableId}
         order by r.position offset ${rows - PAGE} limit ${PAGE}`,
  );
  const offsetMs = performance.now() - t0;

  const sorted = async (orderBy: string) => {
    const a = await page(ctx, tableId, { orderBy });
    const b = await page(ctx, tableId, { orderBy }, a.next ?? undefined);
    return {
      firstPageMs: Math.round(a.ms),
      secondPageMs: Math.round(b.ms),
      walkEstimateMs: Math.round(extrapolateMs(2, a.ms + b.ms, Math.ceil(rows / PAGE))),
    };
  };
  const sortNumber = await sorted("n");
  const sortText = await sorted("t");
  // Selective filters (about 1,000 and a few hundred rows of a million): the page must
  // look through the whole table to fill itself.
  const numberWhere = [{ column: "n", op: "lt", value: 1_000 }];
  const textWhere = [{ column: "t", op: "contains", value: "beef" }];
  const fn = await page(ctx, tableId, { where: numberWhere });
  const ft = await page(ctx, tableId, { where: textWhere });

  const timed: { name: string; ms: number; q: Query }[] = [
    { name: "sort on n (number)", ms: sortNumber.firstPageMs, q: { orderBy: "n" } },
    { name: "sort on t (text)", ms: sortText.firstPageMs, q: { orderBy: "t" } },
    { name: "filter n < 1000", ms: fn.ms, q: { where: numberWhere } },
    { name: "filter t contains 'beef'", ms: ft.ms, q: { where: textWhere } },
  ];
  const worst = timed.reduce((a, b) => (b.ms > a.ms ? b : a));
  return {
    firstPageMs: Math.round(first.ms),
    walk: {
      pages,
      ms: Math.round(walkMs),
      complete: cursor === null,
      slowestPageMs: Math.round(slowest),
    },
    lastPageKeysetMs: Math.round(keyset.ms),
    lastPageOffsetMs: Math.round(offsetMs),
    sortNumber,
    sortText,
    filterNumber: { firstPageMs: Math.round(fn.ms), rows: fn.rows },
    filterText: { firstPageMs: Math.round(ft.ms), rows: ft.rows },
    slowest: worst.name,
    explain: await explain(ctx.db, tableId, worst.q),
  };
}

/** EXPLAIN ANALYZE of the statement `findRows` runs for the first page of `q`. */
async function explain(db: Db, tableId: string, q: Query): Promise<string[]> {
  const [t] = await queryRows<{ schema: unknown }>(
    db,
    sql`select schema from tables where id = ${tableId}`,
  );
  const schema = TableSchema.parse(t?.schema);
  const order = rowOrder(schema, q.orderBy, "asc");
  if (!order.ok) throw new Error("order");
  const parsed = q.where ? ListRowsQuery.parse({ where: q.where }).where : undefined;
  const where = parsed ? checkWhere(schema, parsed) : null;
  if (where && !where.ok) throw new Error("where");
  const statement = findRowsSql(tableId, {
    where: where?.value ?? [],
    order: order.value,
    after: null,
    limit: PAGE + 1,
  });
  const plan = await queryRows<{ "QUERY PLAN": string }>(
    db,
    sql`explain (analyze, buffers) ${statement}`,
  );
  return plan.map((p) => p["QUERY PLAN"]);
}

/** Drains `GET /export`'s stream: how long, how many bytes. */
export async function exportAll(
  ctx: ServiceContext,
  tableId: string,
): Promise<{ ms: number; bytes: number; lines: number }> {
  const t0 = performance.now();
  const r = await exportCsv(ctx, tableId);
  if (!r.ok) throw new Error("export refused");
  const reader = r.value.body.getReader();
  let bytes = 0;
  let lines = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    for (const b of value) if (b === 10) lines++;
  }
  return { ms: Math.round(performance.now() - t0), bytes, lines };
}
