import { getDatabase } from "@db/instance";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { revokeApiKey } from "@/store/api-keys/revoke";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

let key: string;
let tableId: string;
let rowId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  tableId = (
    await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "T", columns: [{ id: "name", name: "Name", type: "text" }] },
    })
  ).body.id;
  rowId = (
    await call<{ rows: { id: string }[] }>("POST", `/api/tables/${tableId}/rows`, {
      key,
      body: { rows: [{ data: { name: "a" } }] },
    })
  ).body.rows[0]?.id as string;
});

async function expectRefused(
  status: number,
  code: string,
  run: () => Promise<{ status: number; body: unknown }>,
): Promise<void> {
  const before = await dbFingerprint();
  const res = await run();
  expect(res.status).toBe(status);
  const parsed = ApiError.parse(res.body);
  expect(parsed.error.code).toBe(code);
  if (status === 400) expect(parsed.error.issues?.length).toBeGreaterThan(0);
  expect(await dbFingerprint()).toBe(before);
}

describe("bad input is refused with the API error shape and writes nothing", () => {
  it("malformed JSON → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("POST", "/api/tables", { key, rawBody: '{"name": "x",' }),
    ));

  it("an empty body where one is needed → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("POST", `/api/tables/${tableId}/rows`, { key, rawBody: "" }),
    ));

  it("wrong types → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("POST", "/api/tables", { key, body: { name: 42, columns: "x" } }),
    ));

  it("unknown top-level fields → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("POST", "/api/tables", { key, body: { name: "x", colour: "red" } }),
    ));

  it("over-long strings → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("POST", "/api/tables", { key, body: { name: "x".repeat(201) } }),
    ));

  it("over-long text values → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("PATCH", `/api/tables/${tableId}/rows/${rowId}`, {
        key,
        body: { data: { name: "y".repeat(100_001) } },
      }),
    ));

  it("text Postgres cannot store (NUL, lone surrogate) → 400", async () => {
    await expectRefused(400, "validation_failed", () =>
      call("PATCH", `/api/tables/${tableId}/rows/${rowId}`, {
        key,
        body: { data: { name: "a\u0000b" } },
      }),
    );
    await expectRefused(400, "validation_failed", () =>
      call("PATCH", `/api/tables/${tableId}/rows/${rowId}`, {
        key,
        rawBody: '{"data":{"name":"\\ud800"}}',
      }),
    );
  });

  it("a body over 1 MiB → 413, with or without a content-length", async () => {
    const big = JSON.stringify({ rows: [{ data: { name: "z".repeat(1024 * 1024) } }] });
    await expectRefused(413, "payload_too_large", () =>
      call("POST", `/api/tables/${tableId}/rows`, { key, rawBody: big }),
    );
    await expectRefused(413, "payload_too_large", () =>
      call("POST", `/api/tables/${tableId}/rows`, {
        key,
        rawBody: "{}",
        headers: { "content-length": String(2 * 1024 * 1024) },
      }),
    );
  });

  it("unknown or malformed ids → 404", async () => {
    await expectRefused(404, "not_found", () =>
      call("GET", "/api/tables/tbl_doesnotexist", { key }),
    );
    await expectRefused(404, "not_found", () =>
      call("GET", `/api/tables/${encodeURIComponent("x'; drop table rows;--")}`, { key }),
    );
    await expectRefused(404, "not_found", () =>
      call("GET", `/api/tables/${"a".repeat(300)}`, { key }),
    );
    await expectRefused(404, "not_found", () =>
      call("GET", `/api/tables/${tableId}/rows/%00`, { key }),
    );
    await expectRefused(404, "not_found", () =>
      call("PATCH", `/api/tables/${tableId}/rows/row_nope`, { key, body: { data: {} } }),
    );
    await expectRefused(404, "not_found", () =>
      call("POST", "/api/workflows/wf_nope/deploy", { key }),
    );
  });

  it("a bad cursor → 400", () =>
    expectRefused(400, "validation_failed", () =>
      call("GET", `/api/tables/${tableId}/rows?cursor=garbage`, { key }),
    ));

  it("an unknown API path → 404 in the error shape", () =>
    expectRefused(404, "not_found", () => call("GET", "/api/nothing/here", { key })));
});

describe("auth", () => {
  it("no key, a malformed key, an unknown key and a revoked key → 401", async () => {
    const fresh = await newWorkspace("revoked");
    expect(await revokeApiKey(getDatabase().db, fresh.key)).toBe(true);
    for (const k of [null, "not a key at all", "cf_unknownunknownunknown", fresh.key]) {
      await expectRefused(401, "unauthorized", () => call("GET", "/api/tables", { key: k }));
      await expectRefused(401, "unauthorized", () =>
        call("POST", "/api/tables", { key: k, body: { name: "x" } }),
      );
    }
    await expectRefused(401, "unauthorized", () =>
      call("GET", "/api/tables", {
        headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
      }),
    );
  });

  it("health needs no key", async () => {
    const res = await call("GET", "/api/health");
    expect(res).toMatchObject({ status: 200, body: { ok: true, db: "ok", backend: "local" } });
  });
});

describe("admin workspaces", () => {
  it("does not exist without CELLFLOW_ADMIN_TOKEN", async () => {
    delete process.env.CELLFLOW_ADMIN_TOKEN;
    await expectRefused(404, "not_found", () =>
      call("POST", "/api/admin/workspaces", { key: "anything", body: { name: "x" } }),
    );
  });

  it("refuses a wrong token, and with the right one creates a workspace whose key works", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = "admin-secret-for-tests";
    try {
      await expectRefused(401, "unauthorized", () =>
        call("POST", "/api/admin/workspaces", { key: "wrong", body: { name: "x" } }),
      );
      await expectRefused(401, "unauthorized", () =>
        call("POST", "/api/admin/workspaces", { body: { name: "x" } }),
      );
      await expectRefused(400, "validation_failed", () =>
        call("POST", "/api/admin/workspaces", {
          key: "admin-secret-for-tests",
          body: { name: "" },
        }),
      );
      const res = await call<{ id: string; name: string; apiKey: string }>(
        "POST",
        "/api/admin/workspaces",
        {
          key: "admin-secret-for-tests",
          body: { name: "Acme" },
        },
      );
      expect(res.status).toBe(201);
      expect(res.body.name).toBe("Acme");
      const tables = await call<{ tables: unknown[] }>("GET", "/api/tables", {
        key: res.body.apiKey,
      });
      expect(tables).toMatchObject({ status: 200, body: { tables: [] } });
      // The admin token is not an API key.
      expect((await call("GET", "/api/tables", { key: "admin-secret-for-tests" })).status).toBe(
        401,
      );
    } finally {
      delete process.env.CELLFLOW_ADMIN_TOKEN;
    }
  });

  it("POST refuses a plan outside free, pro and unlimited with an issue at plan", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = "admin-secret-for-tests";
    try {
      for (const plan of ["enterprise", "", "FREE", 1, null]) {
        const issues = await refusedIssues(() =>
          call("POST", "/api/admin/workspaces", {
            key: "admin-secret-for-tests",
            body: { name: "x", plan },
          }),
        );
        expect(issues, JSON.stringify(plan)).toContain("plan");
      }
    } finally {
      delete process.env.CELLFLOW_ADMIN_TOKEN;
    }
  });
});

describe("admin workspace plans (PATCH /api/admin/workspaces/:id)", () => {
  const patch = (id: string, body: unknown, token: string | null = "admin-secret-for-tests") =>
    call("PATCH", `/api/admin/workspaces/${id}`, { key: token, body });

  it("does not exist without CELLFLOW_ADMIN_TOKEN: 404, even for a real workspace", async () => {
    delete process.env.CELLFLOW_ADMIN_TOKEN;
    const ws = await newWorkspace("unpatched");
    await expectRefused(404, "not_found", () => patch(ws.id, { plan: "unlimited" }, "anything"));
  });

  it("refuses a wrong token or none with 401, and the plan stays", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = "admin-secret-for-tests";
    try {
      const ws = await newWorkspace("guarded");
      await expectRefused(401, "unauthorized", () => patch(ws.id, { plan: "unlimited" }, "wrong"));
      await expectRefused(401, "unauthorized", () => patch(ws.id, { plan: "unlimited" }, null));
      // A workspace's own key does not move its plan.
      await expectRefused(401, "unauthorized", () => patch(ws.id, { plan: "unlimited" }, ws.key));
    } finally {
      delete process.env.CELLFLOW_ADMIN_TOKEN;
    }
  });

  it("an unknown id → 404", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = "admin-secret-for-tests";
    try {
      await expectRefused(404, "not_found", () => patch("ws_nobodyhere", { plan: "pro" }));
    } finally {
      delete process.env.CELLFLOW_ADMIN_TOKEN;
    }
  });

  it("a bad plan, a missing one or another field → 400 with issues at plan, nothing written", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = "admin-secret-for-tests";
    try {
      const ws = await newWorkspace("validated");
      for (const plan of ["enterprise", "", "Pro", 0, null, ["pro"]]) {
        const issues = await refusedIssues(() => patch(ws.id, { plan }));
        expect(issues, JSON.stringify(plan)).toContain("plan");
      }
      expect(await refusedIssues(() => patch(ws.id, {}))).toContain("plan");
      await expectRefused(400, "validation_failed", () =>
        patch(ws.id, { plan: "pro", name: "renamed" }),
      );
      await expectRefused(400, "validation_failed", () => patch(ws.id, "pro"));
    } finally {
      delete process.env.CELLFLOW_ADMIN_TOKEN;
    }
  });
});

/** A 400 that wrote nothing; the paths of its issues. */
async function refusedIssues(
  run: () => Promise<{ status: number; body: unknown }>,
): Promise<string[]> {
  const before = await dbFingerprint();
  const res = await run();
  expect(res.status).toBe(400);
  const parsed = ApiError.parse(res.body);
  expect(parsed.error.code).toBe("validation_failed");
  expect(await dbFingerprint()).toBe(before);
  return (parsed.error.issues ?? []).map((i) => i.path);
}
