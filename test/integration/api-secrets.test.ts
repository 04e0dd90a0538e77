/**
 * Workspace secrets (docs/api.md "Secrets"): a value goes in and never comes back out of
 * the API; it is stored only sealed; a workspace sees only its own; loadSecrets gives the
 * values back to the engine, and leaves out what no longer decrypts.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import type { Logger } from "@/config/log";
import { ApiError } from "@/contracts/common";
import { SecretList, SecretView } from "@/contracts/secrets";
import { loadSecrets } from "@/store/secrets/read";
import { apiClient } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";
import { type ApiResponse, call } from "../helpers/raw-api";

// Routes read the key per request; a key of this file's own.
const SERVER_KEY = randomBytes(32).toString("base64");
process.env.CELLFLOW_SECRET_KEY = SERVER_KEY;

const db = () => getDatabase().db;
let ws: { id: string; key: string };
let other: { id: string; key: string };

beforeAll(async () => {
  await useTestDatabase();
  ws = await newWorkspace("secrets");
  other = await newWorkspace("other");
});

const put = (name: string, body: Schemas["PutSecretRequest"], key = ws.key) =>
  apiClient(key).PUT("/api/secrets/{name}", { params: { path: { name } }, body });
const list = (key = ws.key) => apiClient(key).GET("/api/secrets");
const del = (name: string, key = ws.key) =>
  apiClient(key).DELETE("/api/secrets/{name}", { params: { path: { name } } });

/** A typed call's answer, or a raw one's (for the bodies the typed client cannot send). */
type Answer = ApiResponse | { data?: unknown; error?: unknown; response: Response };
const statusOf = (res: Answer) => ("response" in res ? res.response.status : res.status);
const bodyOf = (res: Answer) => ("response" in res ? (res.error ?? res.data) : res.body);

function expectError(res: Answer, status: number, code: string): void {
  expect(statusOf(res), JSON.stringify(bodyOf(res))).toBe(status);
  expect(ApiError.parse(bodyOf(res)).error.code).toBe(code);
}

function names(res: Answer): string[] {
  return SecretList.parse(bodyOf(res)).secrets.map((s) => s.name);
}

describe("secrets API", () => {
  it("put, list, replace and delete; the value never appears in any response", async () => {
    const value = `sk-${randomBytes(16).toString("hex")}`;
    const created = await put("API_TOKEN", { value });
    expect(created.response.status).toBe(200);
    const view = SecretView.parse(created.data);
    expect(view.name).toBe("API_TOKEN");
    expect(Object.keys(created.data as object).sort()).toEqual(["createdAt", "name", "updatedAt"]);

    const replacement = `sk-${randomBytes(16).toString("hex")}`;
    const replaced = await put("API_TOKEN", { value: replacement });
    expect(replaced.response.status).toBe(200);
    const after = SecretView.parse(replaced.data);
    expect(after.createdAt).toBe(view.createdAt);
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(view.updatedAt));

    expect((await put("B_SECRET", { value: "another one" })).response.status).toBe(200);
    const listed = await list();
    expect(listed.response.status).toBe(200);
    expect(names(listed)).toEqual(["API_TOKEN", "B_SECRET"]);

    for (const res of [created, replaced, listed]) {
      const text = JSON.stringify(res.data);
      expect(text).not.toContain(value);
      expect(text).not.toContain(replacement);
    }

    expect((await del("B_SECRET")).response.status).toBe(204);
    expect(names(await list())).toEqual(["API_TOKEN"]);
    expectError(await del("B_SECRET"), 404, "not_found");
    expectError(await del("NEVER_EXISTED"), 404, "not_found");
    expectError(await del("lowercase"), 404, "not_found");
  });

  it("stores only ciphertext: the plaintext is nowhere in the row", async () => {
    const value = `plain-${randomBytes(12).toString("hex")}`;
    expect((await put("AT_REST", { value })).response.status).toBe(200);
    const rows = await queryRows<Record<string, unknown>>(
      db(),
      sql`select * from secrets where workspace_id = ${ws.id} and name = 'AT_REST'`,
    );
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(value);
    expect(stored).not.toContain(Buffer.from(value).toString("base64"));
    expect(String(rows[0]?.ciphertext)).toMatch(
      /^[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/,
    );
  });

  it("refuses bad names and values with 400 and issues, and stores nothing", async () => {
    const bad: [string, unknown, string][] = [
      ["lower", { value: "x" }, "name"],
      ["1DIGIT", { value: "x" }, "name"],
      ["WITH-DASH", { value: "x" }, "name"],
      ["_UNDERSCORE_FIRST", { value: "x" }, "name"],
      ["OK_NAME", { value: "" }, "value"],
      ["OK_NAME", { value: "é".repeat(4097) }, "value"],
      ["OK_NAME", { value: 42 }, "value"],
      ["OK_NAME", { value: "x", extra: true }, ""],
      ["OK_NAME", {}, "value"],
    ];
    const before = await dbFingerprint();
    for (const [name, body, path] of bad) {
      // Some of these are wrong shapes on purpose: the typed client cannot send them.
      const res = await call("PUT", `/api/secrets/${name}`, { key: ws.key, body });
      expectError(res, 400, "validation_failed");
      const issues = ApiError.parse(res.body).error.issues ?? [];
      expect(
        issues.some((i) => i.path === path),
        `${name} ${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(issues)}`,
      ).toBe(true);
    }
    expect(await dbFingerprint()).toBe(before);
    // Longer than any path id can be: refused by the route guard, like any impossible id.
    expectError(await put(`A${"B".repeat(64)}`, { value: "x" }), 404, "not_found");
    expect((await put(`A${"B".repeat(63)}`, { value: "x" })).response.status).toBe(200);
    expect((await put("OK_NAME", { value: "é".repeat(4096) })).response.status).toBe(200);
    expectError(
      await call("PUT", "/api/secrets/X", { key: ws.key, rawBody: "{" }),
      400,
      "validation_failed",
    );
  });

  it("needs an API key, and a workspace never sees another's secrets", async () => {
    expectError(await apiClient().GET("/api/secrets"), 401, "unauthorized");
    expectError(
      await apiClient().PUT("/api/secrets/{name}", {
        params: { path: { name: "X" } },
        body: { value: "v" },
      }),
      401,
      "unauthorized",
    );
    expect((await put("SHARED_NAME", { value: "mine" })).response.status).toBe(200);
    expect(names(await list(other.key))).toEqual([]);
    expectError(await del("SHARED_NAME", other.key), 404, "not_found");
    // The same name in another workspace is another secret.
    expect((await put("SHARED_NAME", { value: "theirs" }, other.key)).response.status).toBe(200);
    expect(await loadSecrets(db(), ws.id)).toMatchObject({ SHARED_NAME: "mine" });
    expect(await loadSecrets(db(), other.id)).toEqual({ SHARED_NAME: "theirs" });
  });

  it("loadSecrets gives back every value; one that does not decrypt is left out", async () => {
    const fresh = await newWorkspace("load");
    expect(await loadSecrets(db(), fresh.id)).toEqual({});
    const values = { ALPHA: "alpha-value ünïcode ✓", BETA: "b".repeat(8192) };
    for (const [name, value] of Object.entries(values)) {
      expect((await put(name, { value }, fresh.key)).response.status).toBe(200);
    }
    expect(await loadSecrets(db(), fresh.id)).toEqual(values);

    await queryRows(
      db(),
      sql`update secrets set ciphertext = 'AAAA.BBBB.CCCC' where workspace_id = ${fresh.id} and name = 'BETA'`,
    );
    const warnings: unknown[] = [];
    const log: Pick<Logger, "warn"> = {
      warn: (obj: unknown) => {
        warnings.push(obj);
      },
    };
    const loaded = await loadSecrets(db(), fresh.id, log);
    expect(loaded).toEqual({ ALPHA: values.ALPHA });
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).toContain("BETA");

    // Another server key opens nothing, and says so without the values.
    process.env.CELLFLOW_SECRET_KEY = randomBytes(32).toString("hex");
    try {
      warnings.length = 0;
      expect(await loadSecrets(db(), fresh.id, log)).toEqual({});
      expect(warnings).toHaveLength(2);
      expect(JSON.stringify(warnings)).not.toContain(values.ALPHA);
    } finally {
      process.env.CELLFLOW_SECRET_KEY = SERVER_KEY;
    }
  });

  it("deleting a workspace deletes its secrets", async () => {
    const doomed = await newWorkspace("doomed");
    expect((await put("GONE", { value: "soon gone" }, doomed.key)).response.status).toBe(200);
    await queryRows(db(), sql`delete from workspaces where id = ${doomed.id}`);
    const left = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from secrets where workspace_id = ${doomed.id}`,
    );
    expect(left[0]?.n).toBe(0);
  });
});
