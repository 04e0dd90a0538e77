import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

let key: string;
let tableId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  const t = await call<{ id: string }>("POST", "/api/tables", {
    key,
    body: {
      name: "Typed",
      columns: [
        { id: "name", name: "Name", type: "text" },
        { id: "n", name: "N", type: "number" },
        { id: "ok", name: "OK", type: "boolean" },
        { id: "day", name: "Day", type: "date" },
        { id: "meta", name: "Meta", type: "json" },
        { id: "tier", name: "Tier", type: "select", options: ["gold", "silver"] },
      ],
    },
  });
  tableId = t.body.id;
});

type Row = {
  id: string;
  position: number;
  data: Record<string, unknown>;
  cells: Record<string, unknown>;
};

describe("rows API", () => {
  it("inserts typed rows, reads them back in position order, patches with merge, deletes", async () => {
    const data = {
      name: "Acme",
      n: 4.5,
      ok: true,
      day: "2026-12-02",
      meta: { a: [1, null] },
      tier: "gold",
    };
    const ins = await call<{ rows: Row[] }>("POST", `/api/tables/${tableId}/rows`, {
      key,
      body: { rows: [{ data }, { data: { name: "Beta" } }] },
    });
    expect(ins.status).toBe(201);
    expect(ins.body.rows.map((r) => r.data)).toEqual([data, { name: "Beta" }]);
    const [a, b] = ins.body.rows as [Row, Row];
    expect(b.position).toBe(a.position + 1);

    const got = await call<Row>("GET", `/api/tables/${tableId}/rows/${a.id}`, { key });
    expect(got.body).toMatchObject({ id: a.id, data, cells: {} });

    const patched = await call<Row>("PATCH", `/api/tables/${tableId}/rows/${a.id}`, {
      key,
      body: { data: { n: 7, tier: null } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({
      name: "Acme",
      n: 7,
      ok: true,
      day: "2026-12-02",
      meta: { a: [1, null] },
    });

    expect((await call("DELETE", `/api/tables/${tableId}/rows/${a.id}`, { key })).status).toBe(204);
    expect((await call("GET", `/api/tables/${tableId}/rows/${a.id}`, { key })).status).toBe(404);
    expect((await call("DELETE", `/api/tables/${tableId}/rows/${a.id}`, { key })).status).toBe(404);
  });

  it("pages through every row exactly once with the cursor", async () => {
    const t = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "Paged", columns: [{ id: "i", name: "I", type: "number" }] },
    });
    const rows = Array.from({ length: 1000 }, (_, i) => ({ data: { i } }));
    expect(
      (await call("POST", `/api/tables/${t.body.id}/rows`, { key, body: { rows } })).status,
    ).toBe(201);
    expect(
      (
        await call("POST", `/api/tables/${t.body.id}/rows`, {
          key,
          body: { rows: rows.slice(0, 5) },
        })
      ).status,
    ).toBe(201);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page: { body: { rows: Row[]; nextCursor: string | null } } = await call(
        "GET",
        `/api/tables/${t.body.id}/rows?limit=333${q}`,
        { key },
      );
      seen.push(...page.body.rows.map((r) => r.data.i as number));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...rows.map((r) => r.data.i), 0, 1, 2, 3, 4]);
    const table = await call<{ rowCount: number }>("GET", `/api/tables/${t.body.id}`, { key });
    expect(table.body.rowCount).toBe(1005);
  });

  it("concurrent inserts get distinct positions", async () => {
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        call<{ rows: Row[] }>("POST", `/api/tables/${tableId}/rows`, {
          key,
          body: { rows: [{ data: { n: k } }, { data: { n: k } }] },
        }),
      ),
    );
    const positions = batches.flatMap((b) => b.body.rows.map((r) => r.position));
    expect(new Set(positions).size).toBe(12);
  });

  const badValues: [string, Record<string, unknown>][] = [
    ["a string in a number column", { n: "12" }],
    ["a number in a text column", { name: 12 }],
    ["a string in a boolean column", { ok: "yes" }],
    ["a non-date in a date column", { day: "tomorrow" }],
    ["an impossible date", { day: "2026-02-31T99:00" }],
    ["a value outside the select options", { tier: "bronze" }],
    ["an unknown column", { ghost: 1 }],
  ];
  for (const [what, data] of badValues) {
    it(`refuses ${what} with 400 and writes nothing`, async () => {
      const before = await call<{ rowCount: number }>("GET", `/api/tables/${tableId}`, { key });
      const res = await call<{ error: { code: string; issues: { path: string }[] } }>(
        "POST",
        `/api/tables/${tableId}/rows`,
        {
          key,
          body: { rows: [{ data: { name: "fine" } }, { data }] },
        },
      );
      expect(res.status).toBe(400);
      expect(res.body.error.issues[0]?.path).toMatch(/^rows\.1\.data\./);
      const after = await call<{ rowCount: number }>("GET", `/api/tables/${tableId}`, { key });
      expect(after.body.rowCount).toBe(before.body.rowCount);
    });
  }

  it("refuses more than 1,000 rows per call", async () => {
    const rows = Array.from({ length: 1001 }, () => ({ data: {} }));
    expect(
      (await call("POST", `/api/tables/${tableId}/rows`, { key, body: { rows } })).status,
    ).toBe(400);
  });

  it("rows of another workspace's table are 404", async () => {
    const other = await newWorkspace("other");
    const ins = await call<{ rows: Row[] }>("POST", `/api/tables/${tableId}/rows`, {
      key,
      body: { rows: [{ data: { n: 1 } }] },
    });
    const rowId = ins.body.rows[0]?.id;
    const k = other.key;
    expect((await call("GET", `/api/tables/${tableId}/rows`, { key: k })).status).toBe(404);
    expect(
      (
        await call("POST", `/api/tables/${tableId}/rows`, {
          key: k,
          body: { rows: [{ data: {} }] },
        })
      ).status,
    ).toBe(404);
    expect((await call("GET", `/api/tables/${tableId}/rows/${rowId}`, { key: k })).status).toBe(
      404,
    );
    expect(
      (
        await call("PATCH", `/api/tables/${tableId}/rows/${rowId}`, {
          key: k,
          body: { data: { n: 2 } },
        })
      ).status,
    ).toBe(404);
    expect((await call("DELETE", `/api/tables/${tableId}/rows/${rowId}`, { key: k })).status).toBe(
      404,
    );
    const mine = await call<Row>("GET", `/api/tables/${tableId}/rows/${rowId}`, { key });
    expect(mine.body.data).toEqual({ n: 1 });
  });
});
