/**
 * CSV against a table's columns: which column a header names, what a cell's text means
 * in its column's type (import), and how a stored value is written out (export). Pure:
 * nothing here touches the database.
 */
import type { Issue } from "@/contracts/common";
import type { RowData } from "@/contracts/rows";
import type { Column } from "@/contracts/table";
import {
  type CsvRecord,
  type CsvSyntaxError,
  csvRecords,
  neutralizeFormula,
  unneutralizedFormula,
} from "./csv";
import type { Result } from "./result";
import { assertNever } from "./statuses";
import { checkValue, jsonDeeperThan, jsonValueIssues, MAX_JSON_DEPTH } from "./values";

/** Issues listed in a refusal; the message counts all of them. */
export const MAX_IMPORT_ISSUES = 20;

export type Refusal = { message: string; issues: Issue[] };
type CellValue = RowData[string];

/** A header cell's column; null for an empty header cell, whose values must all be empty. */
type HeaderColumn = Column | null;

const quoted = (text: string) =>
  JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** Names first (as the table shows them, case-sensitive), then ids. */
function columnNamed(columns: readonly Column[], header: string): Result<Column, string> {
  // Our own export writes a formula-looking name with a leading `'`; read it back as written.
  for (const name of [header, unneutralizedFormula(header)]) {
    if (name === null) continue;
    const byName = columns.filter((c) => c.name === name);
    const [only] = byName;
    if (only && byName.length === 1) return { ok: true, value: only };
    if (byName.length > 1)
      return {
        ok: false,
        reason: `${quoted(header)} is the name of several columns (${byName.map((c) => c.id).join(", ")}); use a column id instead`,
      };
    const byId = columns.find((c) => c.id === name);
    if (byId) return { ok: true, value: byId };
  }
  return { ok: false, reason: `unknown column ${quoted(header)} (use a column's name or id)` };
}

export function mapHeader(
  columns: readonly Column[],
  header: readonly string[],
): Result<HeaderColumn[], Issue[]> {
  const issues: Issue[] = [];
  const seen = new Map<string, string>();
  const mapped = header.map((cell): HeaderColumn => {
    const name = cell.trim();
    if (name === "") return null;
    const found = columnNamed(columns, name);
    if (!found.ok) {
      issues.push({ path: "header", message: found.reason });
      return null;
    }
    const earlier = seen.get(found.value.id);
    if (earlier !== undefined)
      issues.push({
        path: "header",
        message: `${quoted(earlier)} and ${quoted(name)} both name column "${found.value.id}"`,
      });
    seen.set(found.value.id, name);
    return found.value;
  });
  return issues.length > 0 ? { ok: false, reason: issues } : { ok: true, value: mapped };
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEANS = new Map<string, boolean>([
  ["true", true],
  ["false", false],
  ["yes", true],
  ["no", false],
  ["1", true],
  ["0", false],
]);

const absent = { ok: true, value: undefined } as const;

/** What a cell's text is in `column`: undefined for an empty cell (the column stays absent). */
export function importValue(column: Column, raw: string): Result<CellValue | undefined, string> {
  if (raw === "") return absent;
  let value: CellValue | undefined;
  switch (column.type) {
    case "text":
      value = raw;
      break;
    case "number": {
      const text = raw.trim();
      if (text === "") return absent;
      value = Number(text);
      if (!NUMBER.test(text) || !Number.isFinite(value))
        return { ok: false, reason: "must be a number" };
      break;
    }
    case "boolean": {
      const text = raw.trim().toLowerCase();
      if (text === "") return absent;
      value = BOOLEANS.get(text);
      if (value === undefined)
        return { ok: false, reason: "must be true or false (also yes/no, 1/0)" };
      break;
    }
    case "date":
      value = raw.trim();
      if (value === "") return absent;
      break;
    case "json":
      // Before parsing: what follows the parser recurses, and a deep value would overflow.
      if (jsonDeeperThan(raw, MAX_JSON_DEPTH))
        return { ok: false, reason: `must nest at most ${MAX_JSON_DEPTH} levels deep` };
      try {
        value = JSON.parse(raw);
      } catch {
        return { ok: false, reason: "must be JSON" };
      }
      if (value === null) return absent;
      break;
    case "select":
      value = column.options?.includes(raw) ? raw : raw.trim();
      if (value === "") return absent;
      break;
    default:
      return assertNever(column.type);
  }
  const [unstorable] = jsonValueIssues(value);
  if (unstorable)
    return {
      ok: false,
      reason: unstorable.path ? `at ${unstorable.path}: ${unstorable.message}` : unstorable.message,
    };
  const problem = checkValue(column, value);
  return problem ? { ok: false, reason: problem } : { ok: true, value };
}

/**
 * The rows a CSV file holds, as row data keyed by column id, or every reason it cannot be
 * imported (the first MAX_IMPORT_ISSUES listed). All or nothing: one bad value refuses
 * the file. Lines with no value at all are skipped.
 */
export function csvRows(columns: readonly Column[], text: string): Result<RowData[], Refusal> {
  return csvRecordRows(columns, csvRecords(text));
}

/**
 * csvRows over records already read, so the browser can judge the first records of a
 * file with the same rules and words as the import judges all of it.
 */
export function csvRecordRows(
  columns: readonly Column[],
  recordList: Iterable<Result<CsvRecord, CsvSyntaxError>>,
): Result<RowData[], Refusal> {
  const judge = new CsvRowJudge(columns);
  const rows: RowData[] = [];
  for (const record of recordList) {
    const row = judge.row(record);
    // Once refused, the rows are not needed: keep only the count of problems going.
    if (row !== null && judge.problems === 0) rows.push(row);
    if (judge.ended) break;
  }
  const refusal = judge.refusal();
  return refusal ? { ok: false, reason: refusal } : { ok: true, value: rows };
}

/**
 * The file's records judged one at a time against the table's columns, the header first:
 * what a streamed import needs, holding nothing but the header's mapping and the issues
 * listed. `row` gives a record's row data, or null (the header, a blank line, a record
 * refused); `refusal` says, once the records ended, whether the file is refused.
 */
export class CsvRowJudge {
  /** Problems noted so far (each value that does not fit is one). */
  problems = 0;
  /** Rows given so far (blank lines not counted, refused records counted). */
  rows = 0;
  /** After a syntax error, or a header refused: the records after it mean nothing. */
  ended = false;
  private readonly issues: Issue[] = [];
  private mapping: HeaderColumn[] | null = null;
  private headerRefusal: Refusal | null = null;

  constructor(private readonly columns: readonly Column[]) {}

  row(record: Result<CsvRecord, CsvSyntaxError>): RowData | null {
    if (this.ended) return null;
    if (this.mapping === null) return this.header(record);
    if (!record.ok) {
      this.note(`line ${record.reason.line}`, record.reason.message);
      this.ended = true;
      return null;
    }
    const { line, fields } = record.value;
    if (fields.every((f) => f === "")) return null;
    this.rows++;
    const mapping = this.mapping;
    const before = this.problems;
    // Fewer values than headers: the rest are empty. More: only empty ones are let by
    // (spreadsheets pad rows with trailing commas).
    if (fields.length > mapping.length && fields.slice(mapping.length).some((f) => f !== ""))
      this.note(`line ${line}`, `has ${fields.length} values but the header has ${mapping.length}`);
    const data: RowData = {};
    fields.forEach((raw, k) => {
      if (raw === "" || k >= mapping.length) return;
      const column = mapping[k];
      if (!column) {
        this.note(`line ${line}, column ${k + 1}`, "a value under an empty header");
        return;
      }
      const value = importValue(column, raw);
      if (!value.ok) this.note(`line ${line}, column ${column.name}`, value.reason);
      else if (value.value !== undefined) data[column.id] = value.value;
    });
    return this.problems === before ? data : null;
  }

  /** Why the file is refused (null: it is not), once its records ended. */
  refusal(): Refusal | null {
    if (this.headerRefusal) return this.headerRefusal;
    if (this.mapping === null)
      return refuse("The CSV is empty", [
        { path: "line 1", message: "needs a header row of column names or ids" },
      ]).reason;
    if (this.problems === 0) return null;
    const listed =
      this.problems > this.issues.length ? ` (the first ${this.issues.length} are listed)` : "";
    return {
      message: `${this.problems} problem${this.problems === 1 ? "" : "s"} in the CSV${listed}; nothing was imported`,
      issues: this.issues,
    };
  }

  private header(record: Result<CsvRecord, CsvSyntaxError>): null {
    this.ended = true;
    if (!record.ok) {
      this.headerRefusal = refuse("The CSV header cannot be read", [
        { path: `line ${record.reason.line}`, message: record.reason.message },
      ]).reason;
      return null;
    }
    const header = mapHeader(this.columns, record.value.fields);
    if (!header.ok) {
      this.headerRefusal = refuse("Some headers name no column of the table", header.reason).reason;
      return null;
    }
    this.mapping = header.value;
    this.ended = false;
    return null;
  }

  private note(path: string, message: string): void {
    this.problems++;
    if (this.issues.length < MAX_IMPORT_ISSUES) this.issues.push({ path, message });
  }
}

function refuse(message: string, issues: Issue[]): { ok: false; reason: Refusal } {
  return { ok: false, reason: { message, issues } };
}

/** The header we write: column names, in column order. */
export function exportHeader(columns: readonly Column[]): string[] {
  return columns.map((c) => neutralizeFormula(c.name));
}

/**
 * A stored value as CSV text: empty when absent, JSON text in json columns (so a string
 * there reads back as a string), numbers and booleans as written; any other text is
 * neutralized when a spreadsheet would run it as a formula.
 */
export function exportValue(column: Column, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (column.type === "json") return JSON.stringify(value);
  switch (typeof value) {
    case "string":
      return neutralizeFormula(value);
    case "number":
      return String(value);
    case "boolean":
      return value ? "true" : "false";
    default:
      // Only a value written before its column changed type gets here.
      return JSON.stringify(value);
  }
}
