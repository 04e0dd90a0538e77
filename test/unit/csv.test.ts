import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Column } from "@/contracts/table";
import { CsvReader, csvFilename, csvLine, csvRecords, MAX_RECORD_CHARS } from "@/domain/csv";
import { csvRows, exportValue, importValue } from "@/domain/csv-columns";
import { strictCsv } from "../helpers/strict-csv";

const parse = (text: string) =>
  [...csvRecords(text)].map((r) => (r.ok ? r.value.fields : { error: r.reason }));

/** Records that survive a write: a record of one empty field is a blank line. */
const recordsArb = fc.array(
  fc
    .array(fc.string({ unit: "grapheme", maxLength: 12 }), { minLength: 1, maxLength: 5 })
    .filter((r) => !(r.length === 1 && r[0] === "")),
  { maxLength: 8 },
);

describe("CSV syntax", () => {
  it("whatever we write, our reader and an independent strict RFC 4180 reader both read back exactly", () => {
    fc.assert(
      fc.property(recordsArb, (records) => {
        const text = records.map(csvLine).join("");
        expect(parse(text)).toEqual(records);
        expect(strictCsv(text)).toEqual(records);
      }),
      { numRuns: 500 },
    );
  });

  it("LF, CRLF and lone CR all end a record; a BOM is skipped; the last line break is optional", () => {
    expect(parse("\uFEFFa,b\nc,d\r\ne,f\rg,h")).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
      ["g", "h"],
    ]);
  });

  it("records know the line they start on, counting breaks inside quotes", () => {
    const lines = [...csvRecords('h\n"a\r\nb"\n"c\rd\ne"\nz')].map((r) => r.ok && r.value.line);
    expect(lines).toEqual([1, 2, 4, 7]);
  });

  it("a never-closed quote and text after a closing quote are errors, not guesses", () => {
    expect(parse('a\n"open')).toEqual([["a"], { error: { line: 2, message: expect.any(String) } }]);
    expect(parse('"a"x,b')).toEqual([{ error: { line: 1, message: expect.any(String) } }]);
  });

  it("never throws on any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        parse(text);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("CSV read in parts (a streamed upload)", () => {
  /** The records of `text` pushed in the parts `cuts` make, as csvRecords gives them. */
  function inParts(text: string, cuts: number[]) {
    const reader = new CsvReader();
    const out = [];
    let from = 0;
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      out.push(...reader.push(text.slice(from, cut)));
      from = Math.max(from, cut);
    }
    out.push(...reader.push(text.slice(from), true));
    return out;
  }

  const csvish = fc.string({
    unit: fc.constantFrom('"', ",", "\r", "\n", "a", "é", "\uFEFF", " "),
    maxLength: 60,
  });

  it("cut anywhere, the records, their lines and the first error are those of the whole text", () => {
    fc.assert(
      fc.property(csvish, fc.array(fc.nat({ max: 60 }), { maxLength: 8 }), (text, cuts) => {
        expect(inParts(text, cuts)).toEqual([...csvRecords(text)]);
      }),
      { numRuns: 3000 },
    );
  });

  it("one character at a time reads a tricky file as the whole of it", () => {
    const text = '\uFEFFa,"b\r\nc",""""\r\n"x""y",z\rlast,"q"';
    const cuts = Array.from({ length: text.length }, (_, i) => i);
    expect(inParts(text, cuts)).toEqual([...csvRecords(text)]);
    expect(inParts(text, cuts).map((r) => r.ok && r.value.line)).toEqual([1, 3, 4]);
  });

  it("a record that never ends (a quote left open) is an error once it passes the cap", () => {
    const reader = new CsvReader();
    const part = "x".repeat(1024 * 1024);
    const seen = [...reader.push('a\n"open')];
    for (let i = 0; i * part.length <= MAX_RECORD_CHARS + part.length; i++)
      seen.push(...reader.push(part));
    expect(seen.map((r) => (r.ok ? r.value.fields : r.reason))).toEqual([
      ["a"],
      { line: 2, message: expect.stringContaining("is a quote left open?") },
    ]);
    expect([...reader.push("more", true)]).toEqual([]);
  });
});

describe("CSV values", () => {
  const col = (type: Column["type"], options?: string[]): Column => ({
    id: "c",
    name: "C",
    type,
    ...(options ? { options } : {}),
  });

  it("export then import of a value of its column's type gives the value back", () => {
    const cases: [Column, unknown][] = [
      [col("text"), 'plain, with "quotes"\nand lines'],
      [col("number"), -5],
      [col("number"), 0.1 + 0.2],
      [col("number"), 1e21],
      [col("boolean"), false],
      [col("date"), "2026-12-02T10:00:00.123Z"],
      [col("json"), { a: ["=x", null, -1] }],
      [col("json"), "=looks like a formula"],
      [col("select", ["a b", "c"]), "a b"],
    ];
    for (const [column, value] of cases)
      expect(importValue(column, exportValue(column, value))).toEqual({ ok: true, value });
  });

  it("numbers are written as numbers, never neutralized; text that a spreadsheet would run is", () => {
    expect(exportValue(col("number"), -5)).toBe("-5");
    expect(exportValue(col("text"), "-5")).toBe("'-5");
    expect(exportValue(col("text"), "=HYPERLINK()")).toBe("'=HYPERLINK()");
    expect(exportValue(col("text"), "a=b")).toBe("a=b");
  });

  it("csvRows never throws and either gives rows or at most 20 issues", () => {
    const columns: Column[] = [
      col("text"),
      { ...col("number"), id: "n", name: "N" },
      { ...col("json"), id: "j", name: "J" },
    ];
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (body) => {
        const result = csvRows(columns, `C,N,J\n${body}`);
        if (!result.ok) expect(result.reason.issues.length).toBeLessThanOrEqual(20);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("CSV filenames", () => {
  it("keep only safe ASCII, so the header needs no escaping", () => {
    expect(csvFilename('a"b\\c/d\r\ne;f')).toBe("a_b_c_d_e_f.csv");
    expect(csvFilename("Société 2026")).toBe("Societe 2026.csv");
    expect(csvFilename("日本")).toBe("table.csv");
    expect(csvFilename("..")).toBe("table.csv");
  });
});
