/**
 * CSV import, streamed: the file's text is read as it arrives, judged record by record
 * (domain/csv-columns.ts) and its rows inserted in batches as they come, each batch awaited
 * before more is read, so memory holds one batch whatever the file's size. All or nothing:
 * everything happens in one transaction, which holds the table's row from its start (the
 * columns cannot change under it; other inserts wait rather than interleave), and a bad
 * line, a batch the plan's cap refuses (the insert statement holds the cap), or a file past
 * the import's own limits rolls it all back. Once it committed, the import's rows (one
 * stretch of positions) auto-fire as one run.
 */

import type { CsvImported } from "@/contracts/csv";
import type { RowData } from "@/contracts/rows";
import { TableSchema } from "@/contracts/table";
import { CsvReader } from "@/domain/csv";
import { CsvRowJudge } from "@/domain/csv-columns";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { assertNever } from "@/domain/statuses";
import { autoFire } from "@/engine/auto-run";
import { csvImportLimits } from "@/limits/csv-import";
import { rowCaps } from "@/limits/plans";
import { insertRowsUnderCap } from "@/store/rows/insert";
import { lockTableForImport } from "@/store/tables/import-lock";
import type { ServiceContext } from "./context";
import { checkRoomFor, rowCapReached } from "./row-cap";

/**
 * Rows per insert statement; a batch also ends at BATCH_CHARS of values, for wide rows.
 * Large on purpose: each batch updates the table's row, and within the one transaction
 * every version stays, so each inserted row's foreign-key check walks one version per
 * earlier batch. At 5,000 rows a batch, 1,000,000 rows took 180 s; at 25,000, 53 s.
 */
const BATCH_ROWS = 25_000;
const BATCH_CHARS = 8 * 1024 * 1024;
/** A log line per this many rows, for an import that takes a while. */
const LOG_EVERY_ROWS = 100_000;

/**
 * Why the transaction was rolled back on purpose (anything else thrown is an error);
 * `fileRows` when the plan's cap refused a batch (the answer is measured after the rollback).
 */
class Refused extends Error {
  constructor(
    readonly failure: Failure,
    readonly fileRows?: number,
  ) {
    super(failure.message);
  }
}

interface Imported {
  inserted: number;
  /** The position before the import's first row (null: nothing inserted). */
  after: number | null;
}

export async function importCsv(
  ctx: ServiceContext,
  tableId: string,
  text: AsyncIterable<string>,
): Promise<Result<CsvImported, Failure>> {
  let imported: Imported;
  try {
    imported = await ctx.db.transaction((tx) => readAndInsert({ ...ctx, db: tx }, tableId, text));
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    if (err.fileRows === undefined) return { ok: false, reason: err.failure };
    return { ok: false, reason: await capRefusal(ctx, tableId, err.fileRows, err.failure) };
  }
  // Carriers run on other connections: only committed rows can be handed to them. The
  // import's rows are the table's rows after `after` (its lock kept other inserts out of
  // that stretch); a later row is new too, and mode `new` stamps a cell only once.
  if (imported.after !== null) {
    const fired = await autoFire(ctx, { tableId, rowIds: null, afterPosition: imported.after });
    ctx.log.info({ tableId, inserted: imported.inserted, autoRun: fired }, "csv imported");
  }
  return { ok: true, value: { inserted: imported.inserted } };
}

/** The transaction's body: throws Refused to roll it back with an answer. */
async function readAndInsert(
  ctx: ServiceContext,
  tableId: string,
  text: AsyncIterable<string>,
): Promise<Imported> {
  const table = await lockTableForImport(ctx.db, ctx.workspaceId, tableId);
  if (!table) throw new Refused(notFound("table"));
  const judge = new CsvRowJudge(TableSchema.parse(table.schema).columns);
  const reader = new CsvReader();
  const limits = csvImportLimits();
  const caps = rowCaps();
  let batch: RowData[] = [];
  let batchChars = 0;
  let inserted = 0;
  let after: number | null = null;
  /** The cap refused a batch: the rest of the file is still judged, nothing more inserted. */
  let overCap: Failure | null = null;

  const flush = async () => {
    const rows = batch;
    batch = [];
    batchChars = 0;
    if (rows.length === 0 || overCap || judge.problems > 0) return;
    const stored = await insertRowsUnderCap(ctx.db, tableId, rows, caps);
    switch (stored.kind) {
      case "inserted": {
        after ??= (stored.rows[0]?.position ?? 0) - 1;
        const before = inserted;
        inserted += stored.rows.length;
        if (Math.floor(inserted / LOG_EVERY_ROWS) > Math.floor(before / LOG_EVERY_ROWS))
          ctx.log.info({ tableId, rows: inserted }, "csv import: rows inserted so far");
        return;
      }
      case "gone":
        throw new Refused(notFound("table"));
      case "over_cap":
        overCap = rowCapReached(stored, rows.length);
        return;
      default:
        return assertNever(stored);
    }
  };

  const take = async (part: string, last: boolean) => {
    for (const record of reader.push(part, last)) {
      const row = judge.row(record);
      if (judge.rows > limits.rows)
        throw new Refused({
          code: "payload_too_large",
          message: `An import takes at most ${limits.rows.toLocaleString("en-US")} rows; split the file. Nothing was imported`,
        });
      if (row === null || judge.problems > 0 || overCap) continue;
      batch.push(row);
      if (record.ok) for (const field of record.value.fields) batchChars += field.length;
      if (batch.length >= BATCH_ROWS || batchChars >= BATCH_CHARS) await flush();
    }
  };

  // Read to the end even once the file is refused: its answer names every problem (and
  // the client is still sending it). Only the import's limits stop the reading.
  for await (const part of text) if (!judge.ended) await take(part, false);
  if (!judge.ended) await take("", true);
  await flush();

  const refusal = judge.refusal();
  if (refusal) throw new Refused(invalid(refusal.issues, refusal.message));
  if (overCap) throw new Refused(overCap, judge.rows);
  return { inserted, after };
}

/**
 * A batch refused for the cap counted the import's own earlier batches as rows of the
 * table; after the rollback, the whole file is measured against what the table holds.
 */
async function capRefusal(
  ctx: ServiceContext,
  tableId: string,
  fileRows: number,
  refused: Failure,
): Promise<Failure> {
  const room = await checkRoomFor(ctx, tableId, fileRows);
  return room.ok ? refused : room.reason;
}
