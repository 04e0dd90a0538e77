import { getDatabase } from "@db/instance";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { workspaceFromCookies } from "@/services/session";
import { revokeApiKey } from "@/store/api-keys/revoke";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

let ws: { id: string; key: string };
const cookie = (key: string) => ({ cookie: `theme=dark; cellflow_session=${key}; other=1` });
const ui = { "x-cellflow-ui": "1" };

beforeAll(async () => {
  await useTestDatabase();
  ws = await newWorkspace("Acme workspace");
});

async function signIn(apiKey: string, url = "/api/session", headers: Record<string, string> = {}) {
  return call<{ workspace: { id: string; name: string } }>("POST", url, {
    body: { apiKey },
    headers,
  });
}

describe("signing in (POST /api/session)", () => {
  it("a valid key answers the workspace and sets it as an HttpOnly, SameSite=Strict cookie for 30 days", async () => {
    const res = await signIn(ws.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ workspace: { id: ws.id, name: "Acme workspace" } });
    expect(res.headers.getSetCookie()).toEqual([
      `cellflow_session=${ws.key}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000`,
    ]);
  });

  it("the cookie is Secure when the request came over https, directly or through a proxy", async () => {
    const direct = await signIn(ws.key, "https://cellflow.test/api/session");
    const proxied = await signIn(ws.key, "/api/session", { "x-forwarded-proto": "https" });
    for (const res of [direct, proxied]) {
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()[0]).toMatch(/; Secure$/);
    }
  });

  it("a wrong, malformed or revoked key is 401 in the error shape and sets no cookie", async () => {
    const revoked = await newWorkspace("revoked");
    expect(await revokeApiKey(getDatabase().db, revoked.key)).toBe(true);
    for (const apiKey of ["cf_wrongwrongwrong", "has space; Path=/", revoked.key]) {
      const res = await signIn(apiKey);
      expect(res.status).toBe(401);
      expect(ApiError.parse(res.body).error.code).toBe("unauthorized");
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("refuses bodies outside the schema: extra fields, a missing key, a non-string key", async () => {
    for (const body of [{ apiKey: ws.key, remember: true }, {}, { apiKey: 42 }]) {
      // Wrong shapes on purpose: the typed client cannot send them.
      const res = await call("POST", "/api/session", { body });
      expect(res.status).toBe(400);
      expect(ApiError.parse(res.body).error.code).toBe("validation_failed");
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("a sign-in a cross-site form could send (neither JSON nor the UI header) is refused", async () => {
    const raw = JSON.stringify({ apiKey: ws.key });
    const form = await call("POST", "/api/session", {
      rawBody: raw,
      headers: { "content-type": "text/plain" },
    });
    expect(form.status).toBe(400);
    expect(form.headers.getSetCookie()).toEqual([]);
    const withHeader = await call("POST", "/api/session", {
      rawBody: raw,
      headers: { "content-type": "text/plain", ...ui },
    });
    expect(withHeader.status).toBe(200);
  });
});

describe("the session cookie as credentials", () => {
  it("authenticates reads: GET /api/tables and GET /api/session", async () => {
    const tables = await call<{ tables: unknown[] }>("GET", "/api/tables", {
      headers: cookie(ws.key),
    });
    expect(tables.status).toBe(200);
    const session = await call("GET", "/api/session", { headers: cookie(ws.key) });
    expect(session).toMatchObject({
      status: 200,
      body: { workspace: { id: ws.id, name: "Acme workspace" } },
    });
  });

  it("GET /api/session also answers a bearer key, and 401 without credentials", async () => {
    expect(dataOf(await apiClient(ws.key).GET("/api/session"))).toEqual({
      workspace: { id: ws.id, name: "Acme workspace" },
    });
    const none = await apiClient().GET("/api/session");
    expect(none.response.status).toBe(401);
    ApiError.parse(none.error);
  });

  it("a change with the cookie but without x-cellflow-ui is 401 and writes nothing (the CSRF guard)", async () => {
    const before = await dbFingerprint();
    const res = await call<{ error: { message: string } }>("POST", "/api/tables", {
      body: { name: "forged" },
      headers: cookie(ws.key),
    });
    expect(res.status).toBe(401);
    expect(ApiError.parse(res.body).error.message).toContain("x-cellflow-ui: 1");
    const wrongValue = await call("POST", "/api/tables", {
      body: { name: "forged" },
      headers: { ...cookie(ws.key), "x-cellflow-ui": "true" },
    });
    expect(wrongValue.status).toBe(401);
    expect(await dbFingerprint()).toBe(before);
  });

  it("with x-cellflow-ui: 1 the cookie changes things like a bearer key does", async () => {
    const created = await call<{ id: string }>("POST", "/api/tables", {
      body: { name: "via cookie", columns: [{ id: "n", name: "N", type: "number" }] },
      headers: { ...cookie(ws.key), ...ui },
    });
    expect(created.status).toBe(201);
    const ins = await call("POST", `/api/tables/${created.body.id}/rows`, {
      body: { rows: [{ data: { n: 1 } }] },
      headers: { ...cookie(ws.key), ...ui },
    });
    expect(ins.status).toBe(201);
    const mine = await apiClient(ws.key).GET("/api/tables/{id}", {
      params: { path: { id: created.body.id } },
    });
    expect(dataOf(mine).rowCount).toBe(1);
  });

  it("bearer requests are unchanged: no UI header needed, and a bad bearer is not rescued by a good cookie", async () => {
    const created = await apiClient(ws.key).POST("/api/tables", { body: { name: "bearer" } });
    expect(created.response.status).toBe(201);
    const bad = await call("GET", "/api/tables", {
      headers: { authorization: "Bearer cf_notakey", ...cookie(ws.key) },
    });
    expect(bad.status).toBe(401);
  });

  it("a cookie holding a revoked or impossible key is 401", async () => {
    const revoked = await newWorkspace("revoked later");
    await signIn(revoked.key);
    await revokeApiKey(getDatabase().db, revoked.key);
    for (const value of [revoked.key, "cf_unknownunknown", "%00", ""]) {
      const res = await call("GET", "/api/tables", { headers: cookie(value) });
      expect(res.status, value).toBe(401);
      ApiError.parse(res.body);
    }
  });

  it("another workspace's table through a cookie is 404, for reads and changes", async () => {
    const other = await newWorkspace("other");
    const theirs = await apiClient(other.key).POST("/api/tables", {
      body: { name: "theirs", columns: [{ id: "n", name: "N", type: "number" }] },
    });
    const before = await dbFingerprint();
    const read = await call("GET", `/api/tables/${dataOf(theirs).id}`, { headers: cookie(ws.key) });
    expect(read.status).toBe(404);
    const write = await call("POST", `/api/tables/${dataOf(theirs).id}/rows`, {
      body: { rows: [{ data: { n: 1 } }] },
      headers: { ...cookie(ws.key), ...ui },
    });
    expect(write.status).toBe(404);
    const del = await call("DELETE", `/api/tables/${dataOf(theirs).id}`, {
      headers: { ...cookie(ws.key), ...ui },
    });
    expect(del.status).toBe(404);
    expect(await dbFingerprint()).toBe(before);
  });
});

describe("signing out (DELETE /api/session)", () => {
  it("answers 204 with a cookie that expires the session at once", async () => {
    const res = await call("DELETE", "/api/session", { headers: cookie(ws.key) });
    expect(res.status).toBe(204);
    expect(res.headers.getSetCookie()).toEqual([
      "cellflow_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
    ]);
    const secure = await call("DELETE", "/api/session", {
      headers: { "x-forwarded-proto": "https" },
    });
    expect(secure.headers.getSetCookie()[0]).toMatch(/Max-Age=0; Secure$/);
  });
});

describe("workspaceFromCookies (for the UI's server components)", () => {
  it("gives the workspace of a valid cookie value and null for anything else", async () => {
    expect(await workspaceFromCookies(getDatabase(), ws.key)).toEqual({
      id: ws.id,
      name: "Acme workspace",
    });
    const revoked = await newWorkspace("gone");
    await revokeApiKey(getDatabase().db, revoked.key);
    for (const value of [undefined, "", "cf_nope", "a b", revoked.key])
      expect(await workspaceFromCookies(getDatabase(), value)).toBeNull();
  });
});
