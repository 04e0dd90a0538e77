/**
 * What the Tables page decides from a CSV file before it makes a table: the columns,
 * typed from the first SAMPLE_ROWS rows, or the refusal the import would answer, word for
 * word and with its line numbers. The text is decoded as the import decodes it, read by
 * the import's own reader (domain/csv.ts) and judged by its own rules
 * (domain/csv-columns.ts), so the page and the import cannot disagree on quotes, line
 * breaks, a BOM or blank lines. A file whose first rows are fine is neither loaded nor
 * parsed past them; one they refuse is read whole, so the refusal counts every problem.
 */
import type { Column } from "@/contracts/table";
import { type CsvRecord, type CsvSyntaxError, csvRecords } from "@/domain/csv";
import { csvRecordRows, type Refusal } from "@/domain/csv-columns";
import type { Result } from "@/domain/result";
import { columnsFromCsv } from "./csv-columns";

/** Rows the column types are guessed from (blank lines not counted). */
export const SAMPLE_ROWS = 200;
/** Bytes read first; when the sample needs more, each read is four times the last. */
export const FIRST_READ_BYTES = 1024 * 1024;

export type CsvTablePlan = Result<Column[], Refusal>;

type Read = Result<CsvRecord, CsvSyntaxError>;

const blank = (fields: readonly string[]) => fields.every((f) => f === "");

/**
 * Text from the first bytes of a file (all of it when `whole`), decoded as the import
 * decodes an upload: UTF-8, a leading BOM dropped, invalid bytes refused rather than
 * replaced. A character cut at the end of a part is left out, not refused.
 */
export function csvText(bytes: Uint8Array, whole: boolean): Result<string, Refusal> {
  try {
    return {
      ok: true,
      value: new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: !whole }),
    };
  } catch {
    return {
      ok: false,
      reason: {
        message: "The file is not UTF-8 text",
        issues: [{ path: "", message: "save it as CSV with the UTF-8 encoding" }],
      },
    };
  }
}

/**
 * The plan for a file that starts with `text` (is all of `text` when `whole`). null when
 * more of the file is needed: `text` ends before the sample does (its last record may be
 * cut short, an unclosed quote there may close further on), or the sample is refused
 * (the import's refusal counts the problems of the whole file).
 */
export function planCsvTable(
  text: string,
  whole: boolean,
  sampleRows = SAMPLE_ROWS,
): CsvTablePlan | null {
  const sample: Read[] = [];
  let rows = -1; // the header is not a row
  let known = whole;
  for (const record of csvRecords(text)) {
    // A record after the sample proves the sample's last one ended where the reader said.
    if (rows === sampleRows) {
      known = true;
      break;
    }
    sample.push(record);
    if (record.ok && (rows < 0 || !blank(record.value.fields))) rows++;
  }
  if (!known) return null;

  const [header] = sample;
  let columns: Column[] = [];
  if (header?.ok) {
    if (blank(header.value.fields))
      return {
        ok: false,
        reason: {
          message: "The CSV header is empty",
          issues: [{ path: "line 1", message: "needs a header row of column names" }],
        },
      };
    const data = sample.slice(1).flatMap((r) => (r.ok ? [r.value.fields] : []));
    const made = columnsFromCsv(header.value.fields, data);
    if (!made.ok) return made;
    columns = made.value;
  }
  // No header, or one that cannot be read, is refused here in the import's own words.
  const judged = csvRecordRows(columns, whole ? csvRecords(text) : sample);
  if (judged.ok) return { ok: true, value: columns };
  return whole ? judged : null;
}

/** The plan for `file`, reading only as much of it as the sample needs. */
export async function planCsvFile(
  file: Pick<Blob, "size" | "slice">,
  firstRead = FIRST_READ_BYTES,
  sampleRows = SAMPLE_ROWS,
): Promise<CsvTablePlan> {
  for (let size = firstRead; ; size *= 4) {
    const whole = size >= file.size;
    const text = csvText(new Uint8Array(await file.slice(0, size).arrayBuffer()), whole);
    if (!text.ok) return text;
    const plan = planCsvTable(text.value, whole, sampleRows);
    if (plan) return plan;
  }
}
