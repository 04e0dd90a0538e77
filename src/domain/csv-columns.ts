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

/** One import is one transaction; beyond this a client should split its file. */
export const MAX_IMPORT_ROWS = 100_000;
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
  const records = recordList[Symbol.iterator]();
  const first = records.next();
  if (first.done)
    return refuse("The CSV is empty", [
      { path: "line 1", message: "needs a header row of column names or ids" },
    ]);
  if (!first.value.ok)
    return refuse("The CSV header cannot be read", [
      { path: `line ${first.value.reason.line}`, message: first.value.reason.message },
    ]);
  const header = mapHeader(columns, first.value.value.fields);
  if (!header.ok) return refuse("Some headers name no column of the table", header.reason);
  const mapping = header.value;

  const issues: Issue[] = [];
  let problems = 0;
  const note = (path: string, message: string) => {
    problems++;
    if (issues.length < MAX_IMPORT_ISSUES) issues.push({ path, message });
  };
  const rows: RowData[] = [];
  for (let next = records.next(); !next.done; next = records.next()) {
    const record = next.value;
    if (!record.ok) {
      note(`line ${record.reason.line}`, record.reason.message);
      break;
    }
    const { line, fields } = record.value;
    if (fields.every((f) => f === "")) continue;
    if (rows.length === MAX_IMPORT_ROWS) {
      note(`line ${line}`, `at most ${MAX_IMPORT_ROWS} rows per import; split the file`);
      break;
    }
    // Fewer values than headers: the rest are empty. More: only empty ones are let by
    // (spreadsheets pad rows with trailing commas).
    if (fields.slice(mapping.length).some((f) => f !== ""))
      note(`line ${line}`, `has ${fields.length} values but the header has ${mapping.length}`);
    const data: RowData = {};
    fields.forEach((raw, k) => {
      if (raw === "" || k >= mapping.length) return;
      const column = mapping[k];
      if (!column) {
        note(`line ${line}, column ${k + 1}`, "a value under an empty header");
        return;
      }
      const value = importValue(column, raw);
      if (!value.ok) note(`line ${line}, column ${column.name}`, value.reason);
      else if (value.value !== undefined) data[column.id] = value.value;
    });
    // Once refused, the rows are not needed: keep only the count of problems going.
    if (problems === 0) rows.push(data);
  }
  if (problems > 0) {
    const listed = problems > issues.length ? ` (the first ${issues.length} are listed)` : "";
    return refuse(
      `${problems} problem${problems === 1 ? "" : "s"} in the CSV${listed}; nothing was imported`,
      issues,
    );
  }
  return { ok: true, value: rows };
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
