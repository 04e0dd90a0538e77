import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

let key: string;
let tableId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  const t = await apiClient(key).POST("/api/tables", {
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
  tableId = dataOf(t).id;
});

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
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data }, { data: { name: "Beta" } }] },
    });
    expect(ins.response.status).toBe(201);
    expect(dataOf(ins).rows.map((r) => r.data)).toEqual([data, { name: "Beta" }]);
    const [a, b] = dataOf(ins).rows as [Schemas["RowView"], Schemas["RowView"]];
    expect(b.position).toBe(a.position + 1);

    const got = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId: a.id } },
    });
    expect(dataOf(got)).toMatchObject({ id: a.id, data, cells: {} });

    const patched = await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId: a.id } },
      body: { data: { n: 7, tier: null } },
    });
    expect(patched.response.status).toBe(200);
    expect(dataOf(patched).data).toEqual({
      name: "Acme",
      n: 7,
      ok: true,
      day: "2026-12-02",
      meta: { a: [1, null] },
    });

    expect(
      (
        await apiClient(key).DELETE("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId: a.id } },
        })
      ).response.status,
    ).toBe(204);
    expect(
      (
        await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId: a.id } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(key).DELETE("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId: a.id } },
        })
      ).response.status,
    ).toBe(404);
  });

  it("pages through every row exactly once with the cursor", async () => {
    const t = await apiClient(key).POST("/api/tables", {
      body: { name: "Paged", columns: [{ id: "i", name: "I", type: "number" }] },
    });
    const rows = Array.from({ length: 1000 }, (_, i) => ({ data: { i } }));
    expect(
      (
        await apiClient(key).POST("/api/tables/{id}/rows", {
          params: { path: { id: dataOf(t).id } },
          body: { rows },
        })
      ).response.status,
    ).toBe(201);
    expect(
      (
        await apiClient(key).POST("/api/tables/{id}/rows", {
          params: { path: { id: dataOf(t).id } },
          body: { rows: rows.slice(0, 5) },
        })
      ).response.status,
    ).toBe(201);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: Schemas["RowPage"] = dataOf(
        await apiClient(key).GET("/api/tables/{id}/rows", {
          params: {
            path: { id: dataOf(t).id },
            query: { limit: 333, ...(cursor ? { cursor } : {}) },
          },
        }),
      );
      seen.push(...page.rows.map((r) => r.data.i as number));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...rows.map((r) => r.data.i), 0, 1, 2, 3, 4]);
    const table = await apiClient(key).GET("/api/tables/{id}", {
      params: { path: { id: dataOf(t).id } },
    });
    expect(dataOf(table).rowCount).toBe(1005);
  });

  it("concurrent inserts get distinct positions", async () => {
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        apiClient(key).POST("/api/tables/{id}/rows", {
          params: { path: { id: tableId } },
          body: { rows: [{ data: { n: k } }, { data: { n: k } }] },
        }),
      ),
    );
    const positions = batches.flatMap((b) => dataOf(b).rows.map((r) => r.position));
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
      const before = await apiClient(key).GET("/api/tables/{id}", {
        params: { path: { id: tableId } },
      });
      const res = await apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: tableId } },
        body: { rows: [{ data: { name: "fine" } }, { data }] },
      });
      expect(res.response.status).toBe(400);
      expect(res.error?.error.issues?.[0]?.path).toMatch(/^rows\.1\.data\./);
      const after = await apiClient(key).GET("/api/tables/{id}", {
        params: { path: { id: tableId } },
      });
      expect(dataOf(after).rowCount).toBe(dataOf(before).rowCount);
    });
  }

  it("refuses more than 1,000 rows per call", async () => {
    const rows = Array.from({ length: 1001 }, () => ({ data: {} }));
    expect(
      (
        await apiClient(key).POST("/api/tables/{id}/rows", {
          params: { path: { id: tableId } },
          body: { rows },
        })
      ).response.status,
    ).toBe(400);
  });

  it("rows of another workspace's table are 404", async () => {
    const other = await newWorkspace("other");
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { n: 1 } }] },
    });
    const rowId = dataOf(ins).rows[0]?.id as string;
    const k = other.key;
    expect(
      (await apiClient(k).GET("/api/tables/{id}/rows", { params: { path: { id: tableId } } }))
        .response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(k).POST("/api/tables/{id}/rows", {
          params: { path: { id: tableId } },
          body: { rows: [{ data: {} }] },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(k).GET("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(k).PATCH("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId } },
          body: { data: { n: 2 } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(k).DELETE("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId } },
        })
      ).response.status,
    ).toBe(404);
    const mine = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
    });
    expect(dataOf(mine).data).toEqual({ n: 1 });
  });
});
