/**
 * CSV syntax (RFC 4180, read leniently): records, quoting, and the neutralizing of text
 * a spreadsheet would run as a formula. What the values mean is in csv-columns.ts.
 */
import type { Result } from "./result";

export interface CsvRecord {
  /** The 1-based line of the file the record starts on (the header is line 1). */
  line: number;
  fields: string[];
}

export interface CsvSyntaxError {
  line: number;
  message: string;
}

/** Line breaks in `text`, a CRLF counting once, as an editor numbers lines. */
function lineBreaks(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) n++;
  }
  return n;
}

const COMMA = 44;
const CR = 13;
const LF = 10;

/** A record read, or why the text stops making sense, or that the text ends too soon to tell. */
type Step =
  | { kind: "record"; record: CsvRecord; next: number; line: number }
  | { kind: "error"; error: CsvSyntaxError }
  | { kind: "more" };

const MORE: Step = { kind: "more" };

/**
 * The record that starts at `i` (on line `line`). Unless `final`, text that ends before
 * the record does (an unquoted value or a quote that may go on, a CR whose LF may follow)
 * answers `more`: the record is read again once more text came.
 */
function readRecord(text: string, i: number, line: number, final: boolean): Step {
  const n = text.length;
  const start = line;
  const fields: string[] = [];
  for (;;) {
    if (text.charCodeAt(i) === 34) {
      let value = "";
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) {
          if (!final) return MORE;
          return {
            kind: "error",
            error: { line: start, message: "a quoted value is never closed" },
          };
        }
        if (quote + 1 >= n && !final) return MORE;
        const chunk = text.slice(i, quote);
        line += lineBreaks(chunk);
        value += chunk;
        i = quote + 1;
        if (text.charCodeAt(i) !== 34) break;
        value += '"';
        i++;
      }
      fields.push(value);
      const next = text.charCodeAt(i);
      if (i < n && next !== COMMA && next !== CR && next !== LF)
        return {
          kind: "error",
          error: {
            line,
            message: 'text after a closing quote (inside a quoted value, write a quote as "")',
          },
        };
    } else {
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === COMMA || c === CR || c === LF) break;
        j++;
      }
      if (j >= n && !final) return MORE;
      fields.push(text.slice(i, j));
      i = j;
    }
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      i++;
      continue;
    }
    if (c === CR || c === LF) {
      if (c === CR && i + 1 >= n && !final) return MORE;
      i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
    }
    return { kind: "record", record: { line: start, fields }, next: i, line };
  }
}

/**
 * The records of `text`, one at a time, so a large file is never held twice. A leading
 * BOM is skipped; CRLF, LF and a lone CR all end a record; a quoted field may hold
 * commas, line breaks and `""` for a quote. A quote inside an unquoted field is taken
 * literally. Stops at the first syntax error: an unclosed quote, or text after a closing
 * quote, leaves no sane way to tell where the next record starts.
 */
export function* csvRecords(text: string): Generator<Result<CsvRecord, CsvSyntaxError>> {
  const reader = new CsvReader();
  yield* reader.push(text, true);
}

/** The longest record a reader holds while it waits for the rest of it (characters). */
export const MAX_RECORD_CHARS = 16 * 1024 * 1024;

/**
 * `csvRecords` over text that arrives in parts (a streamed upload): each `push` gives the
 * records its part completed, the last one (`last`) all that remain. Only the record not
 * yet ended is kept between parts, so memory follows the longest record, not the file;
 * a record longer than MAX_RECORD_CHARS (in practice a quote never closed) is an error.
 * After an error it gives nothing more.
 */
export class CsvReader {
  private text = "";
  private line = 1;
  private begun = false;
  private over = false;
  /** An unfinished record is read again only once the text doubled: linear, however long. */
  private retryAt = 0;

  *push(part: string, last = false): Generator<Result<CsvRecord, CsvSyntaxError>> {
    if (this.over) return;
    let text = this.text + part;
    if (!this.begun && (text.length > 0 || last)) {
      this.begun = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (!last && text.length < this.retryAt && text.length <= MAX_RECORD_CHARS) {
      this.text = text;
      return;
    }
    let i = 0;
    while (i < text.length) {
      const step = readRecord(text, i, this.line, last);
      if (step.kind === "more") break;
      if (step.kind === "error") {
        this.over = true;
        this.text = "";
        yield { ok: false, reason: step.error };
        return;
      }
      i = step.next;
      this.line = step.line;
      yield { ok: true, value: step.record };
    }
    this.text = i === 0 ? text : text.slice(i);
    this.retryAt = this.text.length * 2;
    if (this.text.length > MAX_RECORD_CHARS) {
      this.over = true;
      this.text = "";
      yield {
        ok: false,
        reason: {
          line: this.line,
          message: `a record longer than ${MAX_RECORD_CHARS / (1024 * 1024)} Mi characters (is a quote left open?)`,
        },
      };
    }
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One field as RFC 4180 writes it: quoted (quotes doubled) only when it must be. */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, CRLF-terminated as RFC 4180 has it. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

/** What a spreadsheet would run as a formula (or DDE command) when a text cell starts with it. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Text a spreadsheet would evaluate gets a leading `'`, which makes it a literal string
 * there (CSV injection). Only for text: numbers are written as numbers.
 */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** The inverse, for matching a header we wrote back to its column name. */
export function unneutralizedFormula(text: string): string | null {
  return text.startsWith("'") && FORMULA_START.test(text.slice(1)) ? text.slice(1) : null;
}

/** A download name from a table name: ASCII letters, digits, space, `.`, `_`, `-` only. */
export function csvFilename(tableName: string): string {
  const base = tableName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9 ._-]+/g, "_")
    .replace(/^[\s._]+|[\s._]+$/g, "")
    .slice(0, 100);
  return `${base || "table"}.csv`;
}
