import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { csvField, csvRecords } from "@/domain/csv";
import { PLANS } from "@/domain/statuses";
import { decodeSecretKey, openSecret } from "@/security/secret-box";
import { apiClient, dataOf } from "../helpers/api";
import { dbFingerprint } from "../helpers/fingerprint";
import {
  ADMIN_TOKEN,
  accepts,
  baseTable,
  get,
  key,
  post,
  type RowView,
  setUpHostileWorkspace,
  signature,
  workflowId,
} from "../helpers/hostile-input";
import {
  bytes,
  entries,
  inUrl,
  MIB,
  nameOk,
  overLimit,
  storable,
  textOk,
} from "../helpers/hostile-strings";
import { type ApiResponse, type CallOptions, call } from "../helpers/raw-api";

// This file's own database, with the workspace, workflow and base table the tests write into.
setUpHostileWorkspace("hostile");

describe("secrets, hooks and other inputs", () => {
  const serverKey = decodeSecretKey(process.env.CELLFLOW_SECRET_KEY ?? "");

  async function storedSecret(name: string): Promise<string | null> {
    const [row] = await queryRows<{ ct: string }>(
      getDatabase().db,
      sql`select ciphertext as ct from secrets where name = ${name}`,
    );
    if (!row || !serverKey) return null;
    const opened = openSecret(serverKey, row.ct);
    return opened.ok ? opened.value : null;
  }

  it("secret values are stored exactly as sent (write-only, so read back from the database)", async () => {
    for (const [label, s] of entries) {
      const body = { value: s };
      await accepts(
        `secret value ${label}`,
        storable(s) && s.length >= 1 && bytes(s) <= 8 * 1024,
        post("PUT", "/api/secrets/HOSTILE", body),
        () => storedSecret("HOSTILE"),
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });

  it("secret names: only ^[A-Z][A-Z0-9_]{0,63}$, anything else a 400 (or 404 when it cannot be a path id)", async () => {
    for (const [label, s] of entries) {
      await accepts(
        `secret name ${label}`,
        /^[A-Z][A-Z0-9_]{0,63}$/.test(s),
        post("PUT", `/api/secrets/${inUrl(s)}`, { value: "v" }),
        async () => null,
        null,
        [400, 404],
      );
    }
  });

  it("hook actions and other fields no string of this list is valid for are refused", async () => {
    for (const [label, s] of entries) {
      const cases: [string, string, string, unknown][] = [
        ["hook action", "POST", `/api/tables/${baseTable}/hooks`, { action: s }],
        ["run mode", "POST", `/api/tables/${baseTable}/runs`, { mode: s }],
        ["admin name in the wrong place", "POST", "/api/tables", { name: "x", [s]: 1 }],
      ];
      for (const [what, method, path, body] of cases) {
        await accepts(
          `${what} ${label}`,
          false,
          post(method, path, body),
          async () => null,
          null,
          overLimit(body) ? [413] : [400],
        );
      }
    }
  });

  it("id fields and fields that only look things up never fail: group inputs, outputs and dependencies, block ids, run and row ids, cursors, sign-in keys", async () => {
    for (const [label, s] of entries) {
      const probes: [string, string, CallOptions][] = [
        ["POST", `/api/tables/${baseTable}/runs`, { key, body: { mode: "all", groupIds: [s] } }],
        ["POST", `/api/tables/${baseTable}/runs/cancel`, { key, body: { dispatchId: s } }],
        ["POST", `/api/tables/${baseTable}/runs/cancel`, { key, body: { rowIds: [s] } }],
        ["GET", `/api/tables/${baseTable}/rows?cursor=${inUrl(s)}&limit=${inUrl(s)}`, { key }],
        ["GET", `/api/tables/${inUrl(s)}`, { key }],
        ["POST", "/api/session", { body: { apiKey: s } }],
        ...[
          { inputs: { [s]: "out" } },
          { outputs: [{ columnId: "out", from: s }] },
          { dependsOn: [s] },
        ].map((over): [string, string, CallOptions] => [
          "POST",
          "/api/tables",
          {
            key,
            body: {
              name: "ids",
              columns: [{ id: "out", name: "Out", type: "text" }],
              groups: [{ id: "g", name: "G", kind: "workflow", workflowId, ...over }],
            },
          },
        ]),
        [
          "POST",
          "/api/workflows",
          {
            key,
            body: {
              name: "ids",
              definition: {
                inputs: [{ name: s }],
                blocks: [
                  { id: "a", type: "transform", expression: "1", next: s },
                  { id: s, type: "fail", message: s },
                ],
              },
            },
          },
        ],
        ["GET", "/api/tables", { key: null, headers: { cookie: `cellflow_session=${inUrl(s)}` } }],
      ];
      for (const [method, path, opts] of probes) {
        const res = await call(method, path, opts);
        const what = `${method} ${path.slice(0, 80)} (${label})`;
        expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) ApiError.parse(res.body);
      }
    }
  });

  it("workspace names (admin) come back exactly in the session", async () => {
    for (const [label, s] of entries) {
      const body = { name: s };
      await accepts(
        `workspace name ${label}`,
        nameOk(s),
        () => call("POST", "/api/admin/workspaces", { key: ADMIN_TOKEN, body }),
        async (res) => {
          const apiKey = (res.body as { apiKey: string }).apiKey;
          return dataOf(await apiClient(apiKey).GET("/api/session")).workspace.name;
        },
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });

  it("workspace plans (admin): only free, pro and unlimited, on creation and on a change; anything else a 400", async () => {
    const ws = await call<{ id: string }>("POST", "/api/admin/workspaces", {
      key: ADMIN_TOKEN,
      body: { name: "planned" },
    });
    expect(ws.status).toBe(201);
    const plan = async (res: ApiResponse) => (res.body as { plan: string }).plan;
    for (const [label, s] of entries) {
      const valid = (PLANS as readonly string[]).includes(s);
      const created = { name: "planned", plan: s };
      await accepts(
        `plan on creation ${label}`,
        valid,
        () => call("POST", "/api/admin/workspaces", { key: ADMIN_TOKEN, body: created }),
        plan,
        s,
        overLimit(created) ? [413] : [400],
      );
      const changed = { plan: s };
      await accepts(
        `plan change ${label}`,
        valid,
        () =>
          call("PATCH", `/api/admin/workspaces/${ws.body.id}`, { key: ADMIN_TOKEN, body: changed }),
        plan,
        s,
        overLimit(changed) ? [413] : [400],
      );
    }
  });
});

describe("webhook bodies", () => {
  it("a signed insert_rows delivery keeps every value exactly, or is refused with 400", async () => {
    const hook = await apiClient(key).POST("/api/tables/{id}/hooks", {
      params: { path: { id: baseTable } },
      body: { action: "insert_rows" },
    });
    expect(hook.response.status).toBe(201);
    for (const [label, s] of entries) {
      const body = Buffer.from(JSON.stringify({ rows: [{ data: { t: s, j: { [s]: s } } }] }));
      await accepts(
        `webhook ${label}`,
        textOk(s) && s !== "__proto__",
        () =>
          call("POST", `/api/hooks/${dataOf(hook).id}`, {
            rawBody: new Uint8Array(body),
            headers: {
              "content-type": "application/json",
              "cellflow-signature": signature(dataOf(hook).secret, body),
            },
          }),
        async (res) => {
          const id = (res.body as { rowIds: string[] }).rowIds[0];
          return (await get<RowView>(`/api/tables/${baseTable}/rows/${id}`)).data;
        },
        { t: s, j: { [s]: s } },
        body.byteLength > MIB ? [413] : [400],
      );
    }
  });
});

describe("CSV import", () => {
  it("headers and cells keep every value exactly, or the file is refused with 400", async () => {
    for (const [label, s] of entries) {
      // Text that is not valid UTF-16 cannot be put in a UTF-8 file at all (invalid bytes
      // have their own test below).
      if (!s.isWellFormed()) continue;
      const name = nameOk(s) && s !== "__proto__" ? s : "Value";
      const table = await apiClient(key).POST("/api/tables", {
        body: {
          name: "csv",
          columns: [
            { id: "m", name: "Marker", type: "text" },
            { id: "c", name, type: "text" },
          ],
        },
      });
      expect(table.response.status).toBe(201);
      const file = `Marker,${csvField(name)}\r\nrow,${csvField(s)}\r\n`;
      await accepts(
        `csv ${label}`,
        // An empty cell leaves the column absent, which is also "not altered".
        textOk(s),
        () =>
          call("POST", `/api/tables/${dataOf(table).id}/import`, {
            key,
            rawBody: file,
            headers: { "content-type": "text/csv" },
          }),
        async () => {
          const rows = await get<{ rows: RowView[] }>(`/api/tables/${dataOf(table).id}/rows`);
          return rows.rows.map((r) => r.data);
        },
        [s === "" ? { m: "row" } : { m: "row", c: s }],
      );
    }
  });

  it("export neutralizes formulas (=, +, -, @, tab, CR first) in cells and headers; numbers stay numbers; the data is untouched", async () => {
    const table = await apiClient(key).POST("/api/tables", {
      body: {
        name: "=formula table",
        columns: [
          { id: "t", name: "=Header", type: "text" },
          { id: "n", name: "N", type: "number" },
        ],
      },
    });
    const formulas = [
      "=1+1",
      "+cmd|' /C calc'!A0",
      "-2+3",
      "@SUM(A1)",
      "\tindent",
      "\rcr",
      "plain",
    ];
    const file = [
      "'=Header,N",
      ...formulas.map((f, i) => `${csvField(f)},${i === 0 ? "-5" : String(i)}`),
    ].join("\r\n");
    const imported = await call<{ inserted: number }>(
      "POST",
      `/api/tables/${dataOf(table).id}/import`,
      { key, rawBody: file, headers: { "content-type": "text/csv" } },
    );
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.inserted).toBe(formulas.length);
    // Stored as sent: the neutralizing is only in what a spreadsheet is given.
    const rows = await get<{ rows: RowView[] }>(`/api/tables/${dataOf(table).id}/rows`);
    expect(rows.rows.map((r) => r.data.t)).toEqual(formulas);

    const exported = await apiClient(key).GET("/api/tables/{id}/export", {
      params: { path: { id: dataOf(table).id } },
      parseAs: "text",
    });
    expect(exported.response.status).toBe(200);
    const records = [...csvRecords(dataOf(exported))].map((r) => {
      if (!r.ok) throw new Error(r.reason.message);
      return r.value.fields;
    });
    expect(records[0]).toEqual(["'=Header", "N"]);
    expect(records.slice(1)).toEqual([
      ["'=1+1", "-5"],
      ["'+cmd|' /C calc'!A0", "1"],
      ["'-2+3", "2"],
      ["'@SUM(A1)", "3"],
      ["'\tindent", "4"],
      ["'\rcr", "5"],
      ["plain", "6"],
    ]);
    for (const fields of records.slice(1))
      expect(fields[0], "a cell a spreadsheet would run").not.toMatch(/^[=+\-@\t\r]/);
  });

  it("NUL in a cell, raw or escaped in a json cell, is a 400 naming the line and column", async () => {
    const table = await apiClient(key).POST("/api/tables", {
      body: {
        name: "nul",
        columns: [
          { id: "t", name: "T", type: "text" },
          { id: "j", name: "J", type: "json" },
        ],
      },
    });
    for (const file of ["T,J\r\na\u0000b,1\r\n", 'T,J\r\nok,"""a\\u0000b"""\r\n']) {
      const before = await dbFingerprint();
      const res = await call("POST", `/api/tables/${dataOf(table).id}/import`, {
        key,
        rawBody: file,
        headers: { "content-type": "text/csv" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const error = ApiError.parse(res.body).error;
      expect(error.issues?.[0]?.path).toMatch(/^line 2, column [TJ]$/);
      expect(error.issues?.[0]?.message).toMatch(/NUL/);
      expect(await dbFingerprint()).toBe(before);
    }
  });
});
