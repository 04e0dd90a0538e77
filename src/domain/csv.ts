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

/**
 * The records of `text`, one at a time, so a large file is never held twice. A leading
 * BOM is skipped; CRLF, LF and a lone CR all end a record; a quoted field may hold
 * commas, line breaks and `""` for a quote. A quote inside an unquoted field is taken
 * literally. Stops at the first syntax error: an unclosed quote, or text after a closing
 * quote, leaves no sane way to tell where the next record starts.
 */
export function* csvRecords(text: string): Generator<Result<CsvRecord, CsvSyntaxError>> {
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      if (text.charCodeAt(i) === 34) {
        let value = "";
        i++;
        for (;;) {
          const quote = text.indexOf('"', i);
          if (quote < 0) {
            yield { ok: false, reason: { line: start, message: "a quoted value is never closed" } };
            return;
          }
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
        if (i < n && next !== COMMA && next !== CR && next !== LF) {
          yield {
            ok: false,
            reason: {
              line,
              message: 'text after a closing quote (inside a quoted value, write a quote as "")',
            },
          };
          return;
        }
      } else {
        let j = i;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === COMMA || c === CR || c === LF) break;
          j++;
        }
        fields.push(text.slice(i, j));
        i = j;
      }
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i++;
        continue;
      }
      if (c === CR || c === LF) {
        i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
        line++;
      }
      break;
    }
    yield { ok: true, value: { line: start, fields } };
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
