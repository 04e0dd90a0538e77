/**
 * CSV export of a table (the import is csv-import.ts): the rows are streamed page by
 * page, so a large table never sits in memory.
 */
import { TableSchema } from "@/contracts/table";
import { csvFilename, csvLine } from "@/domain/csv";
import { exportHeader, exportValue } from "@/domain/csv-columns";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { listRowData } from "@/store/rows/read";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";

const EXPORT_PAGE_ROWS = 1_000;

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
