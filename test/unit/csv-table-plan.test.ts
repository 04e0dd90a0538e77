/**
 * The Tables page judges a CSV file before it makes a table from it: what it decides must
 * be what the import (POST /tables/:id/import) then does with the same bytes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Column } from "@/contracts/table";
import { csvRows } from "@/domain/csv-columns";
import { readCsvBody } from "@/http/body";
import { describeRefusal } from "@/ui/api";
import { planCsvFile, planCsvTable } from "@/ui/tables/csv-table-plan";

const utf8 = (text: string) => new Uint8Array(new TextEncoder().encode(text));

/** The import's path for an upload: the body as the route decodes it, then the rows. */
async function imported(bytes: Uint8Array<ArrayBuffer>, columns: readonly Column[]) {
  const req = new Request("http://localhost/import", {
    method: "POST",
    body: bytes,
    headers: { "content-type": "text/csv" },
  });
  return csvRows(columns, await readCsvBody(req));
}

const text = (id: string, name: string): Column => ({ id, name, type: "text" });
const number = (id: string, name: string): Column => ({ id, name, type: "number" });

describe("the page's columns for a CSV file take its rows into the import, cell for cell", () => {
  const accepted: [string, string, Column[], Record<string, unknown>[]][] = [
    [
      "a BOM and CRLF",
      "\uFEFFName,N\r\nAcme,1\r\nBeta,2.5\r\n",
      [text("name", "Name"), number("n", "N")],
      [
        { name: "Acme", n: 1 },
        { name: "Beta", n: 2.5 },
      ],
    ],
    [
      "lone CR line breaks",
      "Name,N\rAcme,1\rBeta,2",
      [text("name", "Name"), number("n", "N")],
      [
        { name: "Acme", n: 1 },
        { name: "Beta", n: 2 },
      ],
    ],
    [
      "quoted commas and line breaks of each kind",
      'Name,Note\n"Acme, Inc.","one\r\ntwo\nthree\rfour"\n',
      [text("name", "Name"), text("note", "Note")],
      [{ name: "Acme, Inc.", note: "one\r\ntwo\nthree\rfour" }],
    ],
    [
      '"" for a quote, and a quote inside an unquoted value taken as it is',
      'Name,Said\n"He said ""hi""",5"10\n',
      [text("name", "Name"), text("said", "Said")],
      [{ name: 'He said "hi"', said: '5"10' }],
    ],
    [
      "blank lines and lines of empty values skipped; fewer values than headers",
      "Name,N\n\nAcme\n,,\r\n\rBeta,3,\n",
      [text("name", "Name"), number("n", "N")],
      [{ name: "Acme" }, { name: "Beta", n: 3 }],
    ],
  ];
  for (const [what, csv, columns, rows] of accepted)
    it(what, async () => {
      const plan = await planCsvFile(new Blob([utf8(csv)]));
      expect(plan).toEqual({ ok: true, value: columns });
      expect(await imported(utf8(csv), columns)).toEqual({ ok: true, value: rows });
    });

  it("a date the import would refuse is not guessed a date", async () => {
    const csv = "When\n2026-01-02T10:00:00.1234567891Z\n";
    const plan = await planCsvFile(new Blob([utf8(csv)]));
    expect(plan).toEqual({ ok: true, value: [text("when", "When")] });
  });
});

describe("a CSV file the import would refuse, the page refuses in the same words and lines", () => {
  // The page makes no table for these, so the import is given the columns it would have made.
  const refused: [string, string, Column[], string][] = [
    [
      "an unclosed quote, at the line it opens on",
      'Name,N\nAcme,1\n"Beta,2\nGamma,3\n',
      [text("name", "Name"), number("n", "N")],
      "1 problem in the CSV; nothing was imported — line 3: a quoted value is never closed",
    ],
    [
      "an unclosed quote in the header",
      '"Name,N\nAcme,1\n',
      [],
      "The CSV header cannot be read — line 1: a quoted value is never closed",
    ],
    [
      "text after a closing quote, at its line",
      'Name\r\n"multi\r\nline"x\r\n',
      [text("name", "Name")],
      'line 3: text after a closing quote (inside a quoted value, write a quote as "")',
    ],
    [
      "an empty file",
      "",
      [],
      "The CSV is empty — line 1: needs a header row of column names or ids",
    ],
    [
      "a value under an empty header cell",
      "Name,\nAcme,x\n",
      [text("name", "Name"), text("column_2", "Column 2")],
      "line 2, column 2: a value under an empty header",
    ],
    [
      "more values than headers",
      "Name\nAcme,x\n",
      [text("name", "Name")],
      "line 2: has 2 values but the header has 1",
    ],
  ];
  for (const [what, csv, columns, words] of refused)
    it(what, async () => {
      const plan = await planCsvFile(new Blob([utf8(csv)]));
      const server = await imported(utf8(csv), columns);
      expect(server.ok).toBe(false);
      expect(plan).toEqual(server);
      if (!plan.ok) expect(describeRefusal(plan.reason)).toContain(words);
    });

  it("a refusal counts the problems past the first rows too, as the import counts them", async () => {
    const csv = `N\n1\n1,x\n${"2\n".repeat(20)}2,y\n`;
    const plan = await planCsvFile(new Blob([utf8(csv)]), 4, 3);
    expect(plan).toEqual(await imported(utf8(csv), [number("n", "N")]));
    expect(plan).toMatchObject({ ok: false, reason: { message: expect.stringMatching(/^2 /) } });
  });

  it("bytes that are not UTF-8 are refused, as the import refuses them", async () => {
    const latin1 = new Uint8Array([...utf8("Name\nCaf"), 0xe9, 10]);
    expect(await planCsvFile(new Blob([latin1]))).toMatchObject({ ok: false });
    await expect(imported(latin1, [text("name", "Name")])).rejects.toThrow(/not valid/);
  });

  it("a header named twice, or a blank header line, is refused before any table is made", () => {
    expect(planCsvTable("A, A\n1,2\n", true)).toMatchObject({ ok: false });
    expect(planCsvTable("\nName\nAcme\n", true)).toMatchObject({
      ok: false,
      reason: { issues: [{ path: "line 1" }] },
    });
  });
});

/** Texts made of the pieces CSV readers disagree on. */
const trickyCsv = fc
  .tuple(
    fc.constantFrom("", "\uFEFF", "A,B\r\n", "\uFEFFA,B,C\n", "N\r"),
    fc.array(
      fc.constantFrom(
        "a",
        "1",
        "-2.5",
        "true",
        "2026-01-02",
        ",",
        '"',
        '""',
        "\r",
        "\n",
        "\r\n",
        " ",
        "é",
        "日本",
      ),
      { maxLength: 40 },
    ),
  )
  .map(([head, body]) => head + body.join(""));

describe("reading only the start of a file", () => {
  it("whatever the page decides from the file's first bytes, it would decide from the whole file", async () => {
    await fc.assert(
      fc.asyncProperty(trickyCsv, fc.integer({ min: 1, max: 16 }), async (csv, firstRead) => {
        const whole = planCsvTable(csv, true, 2);
        const plan = await planCsvFile(new Blob([utf8(csv)]), firstRead, 2);
        if (!plan.ok || whole === null) {
          expect(plan).toEqual(whole);
          return;
        }
        // Columns from the first rows; rows past them are the import's to refuse.
        const server = csvRows(plan.value, csv);
        expect(whole).toEqual(server.ok ? plan : server);
      }),
      { numRuns: 500 },
    );
  });

  it("a file the page accepts whole, the import takes with the page's columns", () => {
    fc.assert(
      fc.property(trickyCsv, (csv) => {
        const plan = planCsvTable(csv, true);
        if (plan?.ok) expect(csvRows(plan.value, csv).ok).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("a large file whose first rows are fine is not read past them", async () => {
    let read = 0;
    const blob = new Blob([utf8(`Name,N\n${"Acme,1\n".repeat(2_000_000)}`)]);
    const counting = {
      size: blob.size,
      slice: (start?: number, end?: number) => {
        read += Math.min(end ?? blob.size, blob.size) - (start ?? 0);
        return blob.slice(start, end);
      },
    };
    const plan = await planCsvFile(counting);
    expect(plan).toEqual({ ok: true, value: [text("name", "Name"), number("n", "N")] });
    expect(read).toBeLessThan(blob.size / 4);
  });
});
