/**
 * JSON text as people type it: the value when it parses, and otherwise where it broke
 * (offset, 1-based line and column) with a message that names what was expected.
 * `JSON.parse` words and places its errors differently in every browser, so the editor
 * reads the text itself. While reading, it notes where each value sits in the text, so a
 * path the API reports (`blocks.0.next`) can be found and selected in the editor.
 */

/** A value's place in the text: `text.slice(start, end)` is its source. */
export interface Span {
  start: number;
  end: number;
}

export interface JsonSyntaxError {
  message: string;
  offset: number;
  line: number;
  column: number;
}

export type JsonTextResult =
  | { ok: true; value: unknown; spans: ReadonlyMap<string, Span> }
  | { ok: false; error: JsonSyntaxError };

/** 1-based line and column (in UTF-16 code units, as a textarea counts) of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const at = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: at - lineStart + 1 };
}

/** Paths use the API's spelling: keys and array indexes joined with dots; the root is "". */
function child(path: string, key: string | number): string {
  return path === "" ? String(key) : `${path}.${key}`;
}

const MAX_DEPTH = 200;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Fail extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

function describeChar(ch: string | undefined): string {
  if (ch === undefined) return "the end of the text";
  if (ch === "\n") return "a line break";
  if (ch === "\t") return "a tab";
  if (ch === '"') return "a string";
  return `"${ch}"`;
}

class Reader {
  pos = 0;
  readonly spans = new Map<string, Span>();

  constructor(private readonly text: string) {}

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.pos++;
      else return;
    }
  }

  private unexpected(expected: string): Fail {
    const ch = this.peek();
    if (ch === undefined)
      return new Fail(`Unexpected end of the text: expected ${expected}`, this.pos);
    const hint = ch === '"' && expected.startsWith('","') ? ": is a comma missing?" : "";
    return new Fail(`Expected ${expected}, found ${describeChar(ch)}${hint}`, this.pos);
  }

  document(): unknown {
    this.skipSpace();
    if (this.pos >= this.text.length) throw new Fail("The text is empty: expected a JSON value", 0);
    const value = this.value("", 0);
    this.skipSpace();
    if (this.pos < this.text.length)
      throw new Fail(
        `More text after the end of the JSON value: ${describeChar(this.peek())}`,
        this.pos,
      );
    return value;
  }

  private value(path: string, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new Fail("Nested too deeply", this.pos);
    const start = this.pos;
    const value = this.bare(path, depth);
    this.spans.set(path, { start, end: this.pos });
    return value;
  }

  private bare(path: string, depth: number): unknown {
    const ch = this.peek();
    switch (ch) {
      case "{":
        return this.object(path, depth);
      case "[":
        return this.array(path, depth);
      case '"':
        return this.string();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      default:
        if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.number();
        if (ch !== undefined && /[A-Za-z_]/.test(ch)) throw this.unknownWord();
        if (ch === "'")
          throw new Fail('Strings need double quotes ("), not single quotes', this.pos);
        throw this.unexpected("a value");
    }
  }

  /** `tru`, `undefined`, `NaN`: words JSON does not have. */
  private unknownWord(): Fail {
    WORD.lastIndex = this.pos;
    const word = WORD.exec(this.text)?.[0] ?? "";
    return new Fail(
      `Unknown word "${word}": a value is a string in double quotes, a number, true, false, null, an object or a list`,
      this.pos,
    );
  }

  private literal(word: string, value: boolean | null): boolean | null {
    const after = this.text[this.pos + word.length] ?? "";
    if (!this.text.startsWith(word, this.pos) || /[A-Za-z0-9_]/.test(after))
      throw this.unknownWord();
    this.pos += word.length;
    return value;
  }

  private number(): number {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m || m[0] === "-") throw new Fail("Invalid number", this.pos);
    this.pos += m[0].length;
    return Number(m[0]);
  }

  private string(): string {
    const start = this.pos;
    this.pos++; // the opening quote
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (Number.isNaN(c)) throw new Fail('Unterminated string: a closing " is missing', start);
      if (c === 34) break;
      if (c < 32)
        throw new Fail(
          c === 10
            ? "Line break inside a string: close the string, or write \\n"
            : "Control character inside a string",
          this.pos,
        );
      if (c === 92) {
        const e = this.text[this.pos + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.pos + 2, this.pos + 6)))
            throw new Fail("Invalid \\u escape: expected four hex digits", this.pos);
          this.pos += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e))
          throw new Fail(`Invalid escape "\\${e ?? ""}" in a string`, this.pos);
        this.pos += 2;
        continue;
      }
      this.pos++;
    }
    this.pos++; // the closing quote
    // The slice is a valid JSON string now; JSON.parse decodes its escapes.
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private object(path: string, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++; // {
    this.skipSpace();
    if (this.peek() === "}") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.peek() !== '"') {
        if (this.peek() === "}") throw new Fail("Trailing comma before }", this.pos);
        throw this.unexpected("a property name in double quotes");
      }
      const key = this.string();
      this.skipSpace();
      if (this.peek() !== ":") throw this.unexpected(`":" after the property name "${key}"`);
      this.pos++;
      this.skipSpace();
      const value = this.value(child(path, key), depth + 1);
      // Like JSON.parse: "__proto__" is an own property, not the prototype.
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.skipSpace();
      const next = this.peek();
      if (next === ",") {
        this.pos++;
        continue;
      }
      if (next === "}") {
        this.pos++;
        return out;
      }
      throw this.unexpected('"," or "}"');
    }
  }

  private array(path: string, depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++; // [
    this.skipSpace();
    if (this.peek() === "]") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.peek() === "]") throw new Fail("Trailing comma before ]", this.pos);
      out.push(this.value(child(path, out.length), depth + 1));
      this.skipSpace();
      const next = this.peek();
      if (next === ",") {
        this.pos++;
        continue;
      }
      if (next === "]") {
        this.pos++;
        return out;
      }
      throw this.unexpected('"," or "]"');
    }
  }
}

export function parseJsonText(text: string): JsonTextResult {
  const reader = new Reader(text);
  try {
    const value = reader.document();
    return { ok: true, value, spans: reader.spans };
  } catch (err) {
    if (!(err instanceof Fail)) throw err;
    return {
      ok: false,
      error: { message: err.message, offset: err.offset, ...lineColumn(text, err.offset) },
    };
  }
}

/**
 * Where a path sits in the text; a path that is not there (a missing field the API asks
 * for) falls back to its nearest parent that is. `prefix` is dropped first: the API
 * reports definition paths as `definition.blocks.0.next`.
 */
export function spanOfPath(
  spans: ReadonlyMap<string, Span>,
  path: string,
  prefix = "",
): Span | undefined {
  let p = path;
  if (prefix !== "") {
    if (path !== prefix && !path.startsWith(`${prefix}.`)) return undefined;
    p = path.slice(prefix.length + 1);
  }
  for (;;) {
    const span = spans.get(p);
    if (span) return span;
    if (p === "") return undefined;
    const dot = p.lastIndexOf(".");
    p = dot < 0 ? "" : p.slice(0, dot);
  }
}

/** A stable spelling of a value, to tell whether an edit changed anything. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      Object.defineProperty(sorted, k, {
        value: (v as Record<string, unknown>)[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return sorted;
  });
}

/**
 * What Enter inserts at `caret` in JSON text: a line break and the current line's
 * indentation, one level (two spaces) deeper after an opening `{` or `[`.
 */
export function newlineWithIndent(text: string, caret: number): string {
  const lineStart = text.lastIndexOf("\n", caret - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart, caret))?.[0] ?? "";
  const before = text.slice(lineStart, caret).trimEnd();
  const opens = before.endsWith("{") || before.endsWith("[");
  return `\n${indent}${opens ? "  " : ""}`;
}
