import { describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { csvField } from "@/domain/csv";
import { dbFingerprint } from "../helpers/fingerprint";
import {
  baseTable,
  expectRefusedRaw,
  get,
  key,
  nested,
  post,
  type RowView,
  setUpHostileWorkspace,
  signature,
} from "../helpers/hostile-input";
import { call } from "../helpers/raw-api";

// This file's own database, with the workspace, workflow and base table the tests write into.
setUpHostileWorkspace("hostile");

describe("the holes: __proto__ keys, deep nesting, invalid UTF-8, NUL", () => {
  const raw = (method: string, path: string, body: string | Uint8Array<ArrayBuffer>) => () =>
    call(method, path, { key, rawBody: body, headers: { "content-type": "application/json" } });

  it("a __proto__ key is refused with 400 wherever JSON is taken, never silently dropped", async () => {
    const row = (
      await call<{ rows: { id: string }[] }>("POST", `/api/tables/${baseTable}/rows`, {
        key,
        body: { rows: [{ data: { j: 1 } }] },
      })
    ).body.rows[0]?.id;
    const cases: [string, string, string][] = [
      [
        "json value",
        `/api/tables/${baseTable}/rows`,
        '{"rows":[{"data":{"j":{"__proto__":{"x":1}}}}]}',
      ],
      [
        "nested json value",
        `/api/tables/${baseTable}/rows`,
        '{"rows":[{"data":{"j":[{"a":{"__proto__":1}}]}}]}',
      ],
      ["row data", `/api/tables/${baseTable}/rows`, '{"rows":[{"data":{"__proto__":{"t":"x"}}}]}'],
      ["top level", "/api/tables", '{"name":"x","__proto__":{"name":"y"}}'],
      ["edit", `/api/tables/${baseTable}/rows/${row}`, '{"data":{"j":{"__proto__":[]}}}'],
      [
        "http block body",
        "/api/workflows",
        '{"name":"w","definition":{"blocks":[{"id":"h","type":"http","method":"POST","url":"https://x.test","body":{"__proto__":{"a":1}}}]}}',
      ],
    ];
    for (const [what, path, body] of cases)
      await expectRefusedRaw(
        what,
        raw(what === "edit" ? "PATCH" : "POST", path, body),
        /__proto__/,
      );
  });

  it("JSON nested beyond 100 levels is a 400 (5,000 and 100,000 levels too), and 100 levels are fine", async () => {
    const wrap = (value: string) => `{"rows":[{"data":{"j":${value}}}]}`;
    // The body wraps the value in 4 levels: 96 more make exactly 100.
    const ok = await call<{ rows: { id: string }[] }>("POST", `/api/tables/${baseTable}/rows`, {
      key,
      rawBody: wrap(nested(96)),
      headers: { "content-type": "application/json" },
    });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(201);
    const back = await get<RowView>(`/api/tables/${baseTable}/rows/${ok.body.rows[0]?.id}`);
    expect(JSON.stringify(back.data.j)).toBe(nested(96));
    for (const levels of [97, 5_000, 100_000])
      await expectRefusedRaw(
        `${levels} levels`,
        raw("POST", `/api/tables/${baseTable}/rows`, wrap(nested(levels))),
        /nested too deeply|at most 100 levels/,
      );
    // Brackets inside strings are text, not nesting.
    const text = await call("POST", `/api/tables/${baseTable}/rows`, {
      key,
      body: { rows: [{ data: { t: "[".repeat(5_000) } }] },
    });
    expect(text.status).toBe(201);
    await expectRefusedRaw(
      "deep http block body",
      raw(
        "POST",
        "/api/workflows",
        `{"name":"w","definition":{"blocks":[{"id":"h","type":"http","method":"POST","url":"https://x.test","body":${nested(5_000)}}]}}`,
      ),
      /nested too deeply/,
    );
  });

  it("a CSV json cell nested 5,000 levels is a 400", async () => {
    const table = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "deep", columns: [{ id: "j", name: "J", type: "json" }] },
    });
    const before = await dbFingerprint();
    const res = await call("POST", `/api/tables/${table.body.id}/import`, {
      key,
      rawBody: `J\r\n${csvField(nested(5_000))}\r\n`,
      headers: { "content-type": "text/csv" },
    });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(ApiError.parse(res.body).error.issues?.[0]?.message).toMatch(/100 levels/);
    expect(await dbFingerprint()).toBe(before);
  });

  const INVALID_UTF8: Record<string, number[]> = {
    "a lone continuation byte": [0x80],
    "0xFF": [0xff],
    "an overlong slash": [0xc0, 0xaf],
    "an encoded surrogate": [0xed, 0xa0, 0x80],
    "a truncated sequence": [0xe2, 0x82],
    "beyond U+10FFFF": [0xf4, 0x90, 0x80, 0x80],
  };
  const withBytes = (before: string, bad: number[], after: string) =>
    new Uint8Array([...Buffer.from(before), ...bad, ...Buffer.from(after)]);

  it("invalid UTF-8 in a JSON body is a 400, never stored as U+FFFD", async () => {
    for (const [what, bad] of Object.entries(INVALID_UTF8)) {
      await expectRefusedRaw(
        `table name with ${what}`,
        raw("POST", "/api/tables", withBytes('{"name":"x', bad, '"}')),
        /UTF-8/,
      );
      await expectRefusedRaw(
        `row value with ${what}`,
        raw(
          "POST",
          `/api/tables/${baseTable}/rows`,
          withBytes('{"rows":[{"data":{"t":"', bad, '"}}]}'),
        ),
        /UTF-8/,
      );
    }
    // The character itself, properly encoded, is ordinary text.
    const fine = await call<{ name: string }>("POST", "/api/tables", {
      key,
      rawBody: new Uint8Array(Buffer.from('{"name":"x\uFFFD"}')),
      headers: { "content-type": "application/json" },
    });
    expect(fine.status).toBe(201);
    expect(fine.body.name).toBe("x\uFFFD");
  });

  it("invalid UTF-8 in a CSV file or a signed webhook is a 400", async () => {
    const hook = await call<{ id: string; secret: string }>(
      "POST",
      `/api/tables/${baseTable}/hooks`,
      { key, body: { action: "insert_rows" } },
    );
    for (const [what, bad] of Object.entries(INVALID_UTF8)) {
      await expectRefusedRaw(
        `csv with ${what}`,
        () =>
          call("POST", `/api/tables/${baseTable}/import`, {
            key,
            rawBody: withBytes("T\r\nx", bad, "\r\n"),
            headers: { "content-type": "text/csv" },
          }),
        /UTF-8/,
      );
      const body = withBytes('{"rows":[{"data":{"t":"', bad, '"}}]}');
      await expectRefusedRaw(
        `webhook with ${what}`,
        () =>
          call("POST", `/api/hooks/${hook.body.id}`, {
            rawBody: body,
            headers: {
              "content-type": "application/json",
              "cellflow-signature": signature(hook.body.secret, body),
            },
          }),
        /UTF-8/,
      );
    }
  });

  it("NUL in text is a 400 whose message says NUL, in values, names, keys and secrets", async () => {
    const cases: [string, string, string, unknown][] = [
      [
        "row value",
        "POST",
        `/api/tables/${baseTable}/rows`,
        { rows: [{ data: { t: "a\u0000" } }] },
      ],
      [
        "json key",
        "POST",
        `/api/tables/${baseTable}/rows`,
        { rows: [{ data: { j: { "k\u0000": 1 } } }] },
      ],
      ["table name", "POST", "/api/tables", { name: "a\u0000b" }],
      ["workflow name", "POST", "/api/workflows", { name: "\u0000", definition: { blocks: [] } }],
      ["secret value", "PUT", "/api/secrets/NUL_TEST", { value: "x\u0000y" }],
    ];
    for (const [what, method, path, body] of cases)
      await expectRefusedRaw(what, post(method, path, body), /NUL/);
  });
});
