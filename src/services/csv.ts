/**
 * CSV import and export of a table. Import is all or nothing: the whole file is checked
 * before anything is written, and its rows go in through the same store call as
 * `POST /rows`, in batches, in one transaction; auto-run fires after that commits. A file
 * that would take the table past its plan's cap keeps none of its rows: it is measured
 * whole before the transaction, and each batch's insert holds the cap again inside it.
 * Export streams the rows page by page, so a large table never sits in memory.
 */
import type { CsvImported } from "@/contracts/csv";
import { TableSchema } from "@/contracts/table";
import { csvFilename, csvLine } from "@/domain/csv";
import { csvRows, exportHeader, exportValue } from "@/domain/csv-columns";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { listRowData } from "@/store/rows/read";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";
import { checkRoomFor } from "./row-cap";
import { fireStoredRows, storeRows } from "./rows";

/** What POST /rows takes per call; each batch is one insert statement. */
const IMPORT_BATCH_ROWS = 1_000;
const EXPORT_PAGE_ROWS = 1_000;

export async function importCsv(
  ctx: ServiceContext,
  tableId: string,
  text: string,
): Promise<Result<CsvImported, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const parsed = csvRows(TableSchema.parse(table.schema).columns, text);
  if (!parsed.ok)
    return { ok: false, reason: invalid(parsed.reason.issues, parsed.reason.message) };
  const rows = parsed.value;
  if (rows.length === 0) return { ok: true, value: { inserted: 0 } };
  // The whole file against the plan's cap first, so the refusal names the file's rows; the
  // insert of each batch holds the cap again (a concurrent insert may commit meanwhile).
  const room = await checkRoomFor(ctx, tableId, rows.length);
  if (!room.ok) return room;

  // A batch can still be refused (the table deleted or its columns changed meanwhile):
  // then the transaction is rolled back, so no earlier batch stays behind.
  const outcome: { refused?: Failure } = {};
  let batches: { id: string }[][];
  try {
    batches = await ctx.db.transaction(async (tx) => {
      const stored: { id: string }[][] = [];
      for (let i = 0; i < rows.length; i += IMPORT_BATCH_ROWS) {
        const batch = await storeRows({ ...ctx, db: tx }, tableId, {
          rows: rows.slice(i, i + IMPORT_BATCH_ROWS).map((data) => ({ data })),
        });
        if (!batch.ok) {
          outcome.refused = batch.reason;
          return tx.rollback();
        }
        stored.push(batch.value.map((r) => ({ id: r.id })));
      }
      return stored;
    });
  } catch (err) {
    if (outcome.refused)
      return { ok: false, reason: await refusalOf(ctx, tableId, rows.length, outcome.refused) };
    throw err;
  }
  // Carriers run on other connections: only committed rows can be handed to them. Each
  // batch fires as one POST /rows call would: stamping is scoped by the batch's row ids,
  // and a scope of one batch keeps that cheap where one of the whole file would not.
  for (const batch of batches) await fireStoredRows(ctx, tableId, batch);
  const inserted = batches.reduce((n, b) => n + b.length, 0);
  ctx.log.info({ tableId, inserted }, "csv imported");
  return { ok: true, value: { inserted } };
}

/**
 * A batch refused for the cap counts this import's own earlier batches as rows of the
 * table; after the rollback, the file is measured against what the table really holds.
 */
async function refusalOf(
  ctx: ServiceContext,
  tableId: string,
  fileRows: number,
  refused: Failure,
): Promise<Failure> {
  if (refused.code !== "limit_reached") return refused;
  const room = await checkRoomFor(ctx, tableId, fileRows);
  return room.ok ? refused : room.reason;
}

export interface CsvExport {
  filename: string;
  body: ReadableStream<Uint8Array>;
}

export async function exportCsv(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<CsvExport, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const { columns } = TableSchema.parse(table.schema);
  const encoder = new TextEncoder();
  let after: number | null = null;
  // Pulled on demand: the next page is read only once the client has taken the last one.
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (after === null) {
          after = -1;
          controller.enqueue(encoder.encode(csvLine(exportHeader(columns))));
          return;
        }
        const page = await listRowData(ctx.db, tableId, after, EXPORT_PAGE_ROWS);
        const last = page.at(-1);
        if (!last) {
          controller.close();
          return;
        }
        after = last.position;
        const text = page
          .map((r) => csvLine(columns.map((c) => exportValue(c, r.data[c.id]))))
          .join("");
        controller.enqueue(encoder.encode(text));
      } catch (err) {
        ctx.log.error({ err, tableId }, "csv export failed midway");
        controller.error(err);
      }
    },
  });
  return { ok: true, value: { filename: csvFilename(table.name), body } };
}
