/**
 * The grid at scale, in a real browser against the real `npm start`: a table of `rows`
 * rows built in one SQL statement (positions and `row_count` moved as inserts move them),
 * then the four paths the grid must keep fast — the first page shows, a scroll to the
 * bottom shows the last row, a header click sorts by a number and by a text column, a
 * filter narrows the rows (number and text) — each timed from the action to the row it
 * must show. `npm test` walks them at 100,000 rows (no timings judged), `npm run
 * test:scale` at 1,000,000 (test/scale/grid-1m.scale.ts judges the targets).
 */
import fs from "node:fs";
import path from "node:path";
import { EMBEDDED_DATABASE, EMBEDDED_USER, PASSWORD_FILE } from "@db/embedded";
import pg from "pg";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { UiSession } from "./ui-session";
import { uiApi } from "./ui-session";

/** Row i's values (1-based), as the SQL below writes them: distinct numbers, hex text. */
const N_OF = (i: number) => (i * 7919) % 1_000_003;

export interface GridTimings {
  firstPaintMs: number;
  lastRowMs: number;
  sortNumberMs: number;
  sortTextMs: number;
  filterNumberMs: number;
  filterTextMs: number;
}

function pgClient(s: UiSession): pg.Client {
  const password = fs.readFileSync(path.join(s.dataDir, PASSWORD_FILE), "utf8").trim();
  return new pg.Client({
    host: "127.0.0.1",
    port: s.app.pgPort,
    user: EMBEDDED_USER,
    password,
    database: EMBEDDED_DATABASE,
  });
}

/**
 * Waits until every row index the table's reads recorded is built (none pending or
 * building); their statuses by kind. The server's worker builds them in the background.
 */
export async function rowIndexesSettled(
  s: UiSession,
  tableId: string,
  timeoutMs = 1_200_000,
): Promise<Record<string, string>> {
  const client = pgClient(s);
  await client.connect();
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ what: string; status: string }>(
        `select column_id || ':' || kind as what, status from row_indexes where table_id = $1`,
        [tableId],
      );
      if (rows.length > 0 && rows.every((r) => r.status === "ready" || r.status === "failed"))
        return Object.fromEntries(rows.map((r) => [r.what, r.status]));
      if (Date.now() > until) throw new Error(`row indexes not built: ${JSON.stringify(rows)}`);
      // The next look at the builds' progress (a condition, polled: nothing notifies it).
      await client.query("select pg_sleep(1)");
    }
  } finally {
    await client.end();
  }
}

/** Row i's data as SQL (`i`: 1-based): `n` and `t` by default. */
const SCALE_DATA = "jsonb_build_object('n', (i::bigint * 7919) % 1000003, 't', md5(i::text))";

/** `rows` rows at the table's end in one SQL statement; `data`: row i's values as SQL. */
export async function fillRows(
  s: UiSession,
  tableId: string,
  rows: number,
  data = SCALE_DATA,
): Promise<void> {
  const client = pgClient(s);
  await client.connect();
  try {
    await client.query(
      `with pos as (
         update tables set next_position = next_position + $2, row_count = row_count + $2
          where id = $1
         returning next_position - $2 as start)
       insert into rows (id, table_id, position, data)
       select 'row_scale_' || $1 || '_' || i, $1, pos.start + i - 1, ${data}
         from pos, generate_series(1, $2::int) i`,
      [tableId, rows],
    );
    await client.query("analyze rows");
  } finally {
    await client.end();
  }
}

/** A table of `rows` generated rows: `n` a number column, `t` a text one. */
export async function bigTable(s: UiSession, rows: number): Promise<string> {
  const t = await uiApi<{ id: string }>(s, "POST", "/api/tables", {
    name: `Grid at ${rows.toLocaleString("en")}`,
    columns: [
      { id: "n", name: "N", type: "number" },
      { id: "t", name: "T", type: "text" },
    ],
  });
  expect(t.status).toBe(201);
  await fillRows(s, t.body.id, rows);
  return t.body.id;
}

/** Milliseconds until the first shown row's `column` reads `text`. */
async function timeFirst(page: Page, column: string, text: string, act: () => Promise<void>) {
  const t0 = performance.now();
  await act();
  await page
    .locator(`[data-testid=grid-row] [data-testid=value-${column}]`, {
      hasText: new RegExp(`^${text}$`),
    })
    .first()
    .waitFor({ timeout: 120_000 });
  return performance.now() - t0;
}

async function addFilter(page: Page, column: string, op: string, value: string) {
  await page.click("[data-testid=filter-add]");
  const bar = page.getByTestId("filter-bar");
  await bar.getByTestId("condition-field").selectOption(`c:${column}`);
  await bar.getByTestId("condition-op").selectOption(op);
  await bar.getByTestId("condition-value").fill(value);
  await bar.getByTestId("condition-add").click();
}

/** The four paths, on a table made by `bigTable` with `rows` rows; the time of each. */
export async function walkGrid(s: UiSession, tableId: string, rows: number): Promise<GridTimings> {
  const { page } = s;
  const ns = Array.from({ length: rows }, (_, i) => N_OF(i + 1));
  const sortedN = [...ns].sort((a, b) => a - b);

  // First paint: the page opened, the first row shown.
  const firstPaintMs = await timeFirst(page, "n", String(N_OF(1)), async () => {
    await page.goto(`${s.app.url}/tables/${tableId}`);
  });
  await page
    .getByText(`${rows.toLocaleString("en")} rows`)
    .first()
    .waitFor();

  // Jump to the last row: the scrollbar dragged to the bottom.
  const grid = page.getByTestId("grid");
  const t0 = performance.now();
  await grid.evaluate((el) => el.scrollTo({ top: el.scrollHeight, behavior: "instant" }));
  await page
    .locator("[data-testid=grid-row] [data-testid=value-n]", {
      hasText: new RegExp(`^${N_OF(rows)}$`),
    })
    .waitFor({ timeout: 120_000 });
  const lastRowMs = performance.now() - t0;
  // Its index is the last: the lead cell numbers it.
  await page.getByText(String(rows), { exact: true }).first().waitFor();

  // The middle: a scroll there shows rows from around it.
  await grid.evaluate((el) => el.scrollTo({ top: el.scrollHeight / 2, behavior: "instant" }));
  await page.getByTestId("grid-row").first().waitFor();

  // Sort by N (ascending: the smallest first), then by T, then off.
  const sortNumberMs = await timeFirst(page, "n", String(sortedN[0]), () =>
    page.getByTestId("sort-n").click(),
  );
  // Descending, then off: back in position order before the next sort is timed.
  await page.getByTestId("sort-n").click();
  await page.getByTestId("sort-n").click();
  await timeFirst(page, "n", String(N_OF(1)), async () => {});
  const minT = await minText(s, tableId);
  const sortTextMs = await timeFirst(page, "t", minT, () => page.getByTestId("sort-t").click());
  await page.getByTestId("sort-t").click();
  await page.getByTestId("sort-t").click();
  await timeFirst(page, "n", String(N_OF(1)), async () => {});

  // Filter N < 1000: the first matching row in position order, and the count.
  const under = ns.findIndex((n) => n < 1_000);
  const filterNumberMs = await timeFirst(page, "n", String(ns[under]), () =>
    addFilter(page, "n", "lt", "1000"),
  );
  const matching = ns.filter((n) => n < 1_000).length;
  await page
    .getByTestId("matching-count")
    .filter({ hasText: `${matching.toLocaleString("en")} matching rows` })
    .waitFor({ timeout: 120_000 });
  await page.getByTestId("filter-chip-remove").click();
  await timeFirst(page, "n", String(N_OF(1)), async () => {});

  // Filter T contains "beef".
  const beef = await firstContaining(s, tableId, "beef");
  const filterTextMs = await timeFirst(page, "t", beef, () =>
    addFilter(page, "t", "contains", "beef"),
  );
  await page.getByTestId("filter-chip-remove").click();
  return { firstPaintMs, lastRowMs, sortNumberMs, sortTextMs, filterNumberMs, filterTextMs };
}

/** Through the API, not timed: the smallest T (what the sorted grid shows first). */
async function minText(s: UiSession, tableId: string): Promise<string> {
  const r = await uiApi<{ rows: { data: { t: string } }[] }>(
    s,
    "GET",
    `/api/tables/${tableId}/rows?orderBy=t&limit=1`,
  );
  return r.body.rows[0]?.data.t ?? "";
}

async function firstContaining(s: UiSession, tableId: string, text: string): Promise<string> {
  const where = encodeURIComponent(JSON.stringify([{ column: "t", op: "contains", value: text }]));
  const r = await uiApi<{ rows: { data: { t: string } }[] }>(
    s,
    "GET",
    `/api/tables/${tableId}/rows?where=${where}&limit=1`,
  );
  return r.body.rows[0]?.data.t ?? "";
}
