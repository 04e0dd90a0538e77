/**
 * The authorization matrix, credentials half (API.md "Conventions", docs/api.md
 * "Sessions"): every route and method, called with every kind of credential that opens no
 * workspace, answers 401 in the API error shape, writes nothing, and never shows anything
 * of the workspace it was refused; public routes keep their own rules. Routes are
 * discovered from the files (the matrix is in test/helpers/authz-matrix.ts), and a route
 * this matrix cannot call fails the suite: no route is added unprotected unnoticed.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateApiKey } from "@/store/api-keys/keys";
import { listRoutes } from "../helpers/api";
import {
  ADMIN_TOKEN,
  BAD_CREDENTIALS,
  cookie,
  expectError,
  expectNoLeak,
  FOREIGN_CREDENTIALS,
  intruder,
  options,
  revokedKey,
  sentText,
  setUpAuthzWorkspaces,
  UI,
  victim,
} from "../helpers/authz-fixtures";
import { keyedCases, MATRIX } from "../helpers/authz-matrix";
import { dbFingerprint } from "../helpers/fingerprint";
import { call } from "../helpers/raw-api";

setUpAuthzWorkspaces();

describe("the matrix covers the API", () => {
  it("every route and method the server serves has an expectation here, and nothing else does", async () => {
    const served = (await listRoutes()).flatMap((r) => r.methods.map((m) => `${m} ${r.template}`));
    const unknown = served.filter((s) => !Object.hasOwn(MATRIX, s));
    expect(unknown, "routes the authorization matrix does not know how to call").toEqual([]);
    expect(Object.keys(MATRIX).filter((k) => !served.includes(k))).toEqual([]);
  });

  it("unknown API paths answer 404 in the error shape, whatever the credentials", async () => {
    const credentials: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${intruder.ws.key}` },
    ];
    for (const headers of credentials) {
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const res = await call(method, "/api/tables-but-not-really", { headers });
        expectError(res, 404, "not_found", `${method} unknown path`);
      }
    }
  });
});

describe("credentials that open no workspace are a 401 on every keyed route and write nothing", () => {
  for (const cred of BAD_CREDENTIALS) {
    it(`${cred.name} → 401`, async () => {
      for (const [method, template, spec] of keyedCases()) {
        if (cred.writesOnly && method === "GET") continue;
        const req = spec.request(victim);
        const headers = cred.headers();
        const before = await dbFingerprint();
        const res = await call(method, req.path, options(req, headers));
        expectError(res, 401, "unauthorized", `${method} ${template} with ${cred.name}`);
        expectNoLeak(res, sentText(req, headers));
        expect(await dbFingerprint(), `${method} ${template} wrote`).toBe(before);
      }
    });
  }
});

describe("public routes keep their own rules", () => {
  const everyCredential = () => [
    ...BAD_CREDENTIALS.map((c) => ({ name: c.name, headers: c.headers() })),
    ...FOREIGN_CREDENTIALS.map((c) => ({ name: c.name, headers: c.headers() })),
    { name: "the victim's own key", headers: { authorization: `Bearer ${victim.ws.key}` } },
  ];

  it("GET /api/health answers anyone, and shows nothing of any workspace", async () => {
    for (const cred of everyCredential()) {
      const res = await call("GET", "/api/health", { headers: cred.headers });
      expect(res.status, cred.name).toBe(200);
      expect(res.body).toMatchObject({ ok: true, db: "ok" });
      expectNoLeak(res, sentText({ path: "/api/health" }, cred.headers));
    }
  });

  it("POST /api/hooks/:hookId takes no API key or cookie instead of a signature: 401, nothing inserted", async () => {
    const body = JSON.stringify({ rows: [{ data: { v: "pushed" } }] });
    for (const cred of everyCredential()) {
      const headers = { ...cred.headers, "content-type": "application/json" };
      const before = await dbFingerprint();
      const res = await call("POST", `/api/hooks/${victim.hookId}`, { rawBody: body, headers });
      expectError(res, 401, "unauthorized", `hook with ${cred.name}`);
      expectNoLeak(res, sentText({ path: `/api/hooks/${victim.hookId}` }, headers));
      expect(await dbFingerprint()).toBe(before);
    }
  });

  it("a delivery signed with another hook's secret is refused like a wrong signature", async () => {
    const body = JSON.stringify({ rows: [{ data: { v: "pushed" } }] });
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac("sha256", intruder.hookSecret).update(`${t}.${body}`).digest("hex");
    const before = await dbFingerprint();
    const res = await call("POST", `/api/hooks/${victim.hookId}`, {
      rawBody: body,
      headers: { "content-type": "application/json", "cellflow-signature": `t=${t},v1=${v1}` },
    });
    expectError(res, 401, "unauthorized", "hook signed with another hook's secret");
    expectNoLeak(res, `/api/hooks/${victim.hookId}`);
    expect(await dbFingerprint()).toBe(before);
  });

  it("POST /api/admin/workspaces takes only the admin token: any API key or cookie is a 401", async () => {
    for (const cred of everyCredential()) {
      const headers = { ...cred.headers, ...UI };
      const before = await dbFingerprint();
      const res = await call("POST", "/api/admin/workspaces", { body: { name: "x" }, headers });
      expectError(res, 401, "unauthorized", `admin with ${cred.name}`);
      expectNoLeak(res, sentText({ path: "/api/admin/workspaces" }, headers));
      expect(await dbFingerprint()).toBe(before);
    }
    const admitted = await call("POST", "/api/admin/workspaces", {
      key: ADMIN_TOKEN,
      body: { name: "admitted" },
    });
    expect(admitted.status).toBe(201);
  });

  it("PATCH /api/admin/workspaces/:id takes only the admin token: no key or cookie moves a plan, not even the workspace's own", async () => {
    const path = `/api/admin/workspaces/${victim.ws.id}`;
    for (const cred of everyCredential()) {
      const headers = { ...cred.headers, ...UI };
      const before = await dbFingerprint();
      const res = await call("PATCH", path, { body: { plan: "unlimited" }, headers });
      expectError(res, 401, "unauthorized", `plan change with ${cred.name}`);
      expectNoLeak(res, sentText({ path }, headers));
      expect(await dbFingerprint()).toBe(before);
    }
    // The admin token does; on a workspace of its own, so the fixtures keep their plans.
    const created = await call<{ id: string }>("POST", "/api/admin/workspaces", {
      key: ADMIN_TOKEN,
      body: { name: "upgraded" },
    });
    const admitted = await call("PATCH", `/api/admin/workspaces/${created.body.id}`, {
      key: ADMIN_TOKEN,
      body: { plan: "pro" },
    });
    expect(admitted).toMatchObject({ status: 200, body: { plan: "pro" } });
  });

  it("POST /api/session signs in only with a live key: a bad one is a 401 with no cookie, a foreign one opens only its own workspace", async () => {
    for (const apiKey of ["not a key", generateApiKey(), revokedKey]) {
      const before = await dbFingerprint();
      const res = await call("POST", "/api/session", { body: { apiKey } });
      expectError(res, 401, "unauthorized", `sign-in with ${apiKey}`);
      expect(await dbFingerprint()).toBe(before);
    }
    // A session cookie does not sign anyone in: the body's key alone decides.
    const viaCookie = await call("POST", "/api/session", {
      body: { apiKey: revokedKey },
      headers: { ...cookie(victim.ws.key), ...UI },
    });
    expectError(viaCookie, 401, "unauthorized", "sign-in with a cookie and a revoked key");
    const foreign = await call("POST", "/api/session", { body: { apiKey: intruder.ws.key } });
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({
      workspace: { id: intruder.ws.id, name: "intruder workspace" },
    });
    expectNoLeak(foreign, "");
  });

  it("DELETE /api/session only clears the cookie, whoever asks", async () => {
    for (const cred of everyCredential()) {
      const before = await dbFingerprint();
      const res = await call("DELETE", "/api/session", { headers: cred.headers });
      expect(res.status, cred.name).toBe(204);
      expect(res.headers.getSetCookie()[0]).toMatch(/^cellflow_session=;.*Max-Age=0/);
      expect(await dbFingerprint()).toBe(before);
    }
  });
});
