/**
 * Signed webhooks (API.md "Webhooks"): only a request signed with the hook's secret, over
 * its exact bytes and within 300 s, acts on the table; it acts exactly as the matching
 * API call would; and a replayed request acts once and gets the first answer again.
 */
import { createHmac, randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { decodeSecretKey, openSecret } from "@/security/secret-box";
import { pruneHookDeliveries } from "@/store/hook-deliveries/prune";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { type ApiResponse, call } from "../helpers/raw-api";
import { workflowTable } from "../helpers/tables";

// Routes read the key per request; a key of this file's own.
const SERVER_KEY = randomBytes(32).toString("base64");
process.env.CELLFLOW_SECRET_KEY = SERVER_KEY;

const db = () => getDatabase().db;
let key: string;
let tableId: string;

interface Created {
  id: string;
  url: string;
  secret: string;
  action: string;
}

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  ({ tableId } = await workflowTable(key, {
    workflow: upperDefinition,
    outputs: { up: "out" },
    columns: [
      { id: "v", name: "V", type: "text" },
      { id: "up", name: "Up", type: "text" },
    ],
    group: { id: "upper", name: "Upper", inputs: { v: "v" }, dependsOn: ["v"], autoRun: true },
    rows: [],
  }));
});

const now = () => Math.floor(Date.now() / 1000);

function sign(secret: string, body: string, t: number | string = now()): string {
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex");
  return `t=${t},v1=${v1}`;
}

async function newHook(action: "insert_rows" | "run"): Promise<Created> {
  const res = await apiClient(key).POST("/api/tables/{id}/hooks", {
    params: { path: { id: tableId } },
    body: { action },
  });
  expect(res.response.status).toBe(201);
  return dataOf(res);
}

function deliver<T = unknown>(
  hookId: string,
  body: string,
  signature: string | null,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  return call<T>("POST", `/api/hooks/${hookId}`, {
    rawBody: body,
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { "cellflow-signature": signature }),
      ...headers,
    },
  });
}

async function rowCount(): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from rows where table_id = ${tableId}`,
  );
  return row?.n ?? 0;
}

function expectUnauthorized(res: ApiResponse): void {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(ApiError.parse(res.body).error.code).toBe("unauthorized");
}

const rowsBody = (...values: string[]) =>
  JSON.stringify({ rows: values.map((v) => ({ data: { v } })) });

describe("creating hooks", () => {
  it("answers the secret once and stores it only encrypted under the server key", async () => {
    const hook = await newHook("insert_rows");
    expect(hook).toMatchObject({ url: `/api/hooks/${hook.id}`, action: "insert_rows" });
    expect(hook.secret.length).toBeGreaterThanOrEqual(32);

    const [stored] = await queryRows<{ ct: string }>(
      db(),
      sql`select secret_ciphertext as ct from hooks where id = ${hook.id}`,
    );
    const ct = stored?.ct ?? "";
    expect(ct).not.toContain(hook.secret);
    expect(ct).toMatch(/^[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    const serverKey = decodeSecretKey(SERVER_KEY);
    if (!serverKey) throw new Error("bad test key");
    expect(openSecret(serverKey, ct)).toEqual({ ok: true, value: hook.secret });

    // Listing never shows it again.
    const list = await apiClient(key).GET("/api/tables/{id}/hooks", {
      params: { path: { id: tableId } },
    });
    expect(list.response.status).toBe(200);
    expect(dataOf(list).hooks.map((h) => h.id)).toContain(hook.id);
    expect(JSON.stringify(list.error ?? list.data)).not.toContain(hook.secret);
  });

  it("another workspace's table is a 404, an unknown action a 400, no key a 401", async () => {
    const other = await newWorkspace("other");
    const foreign = await apiClient(other.key).POST("/api/tables/{id}/hooks", {
      params: { path: { id: tableId } },
      body: { action: "run" },
    });
    expect(foreign.response.status).toBe(404);
    const listed = await apiClient(other.key).GET("/api/tables/{id}/hooks", {
      params: { path: { id: tableId } },
    });
    expect(listed.response.status).toBe(404);
    // An action the API does not know is a wrong shape: the typed client cannot send it.
    const bad = await call("POST", `/api/tables/${tableId}/hooks`, {
      key,
      body: { action: "delete_everything" },
    });
    expect(bad.status).toBe(400);
    const anonymous = await apiClient().POST("/api/tables/{id}/hooks", {
      params: { path: { id: tableId } },
      body: { action: "run" },
    });
    expect(anonymous.response.status).toBe(401);
  });
});

describe("signed deliveries", () => {
  it("insert_rows: a valid signature inserts the rows, and they auto-fire like POST /rows", async () => {
    const hook = await newHook("insert_rows");
    const before = await rowCount();
    const res = await deliver<{ inserted: number; rowIds: string[] }>(
      hook.id,
      rowsBody("alpha", "beta"),
      sign(hook.secret, rowsBody("alpha", "beta")),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.inserted).toBe(2);
    expect(await rowCount()).toBe(before + 2);
    const [first] = res.body.rowIds;
    let data: Record<string, unknown> = {};
    const filled = await waitFor(async () => {
      const row = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
        params: { path: { id: tableId, rowId: first as string } },
      });
      data = dataOf(row).data;
      return data.up === "ALPHA";
    }, 30_000);
    expect(filled, JSON.stringify(data)).toBe(true);
  });

  it("run: a valid signature starts a run exactly like POST /runs", async () => {
    const hook = await newHook("run");
    const body = JSON.stringify({ mode: "all", groupIds: ["upper"] });
    const res = await deliver<{ dispatchId: string; stamped: number }>(
      hook.id,
      body,
      sign(hook.secret, body),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.stamped).toBeGreaterThan(0);
    const run = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: res.body.dispatchId } },
    });
    expect(run.response.status).toBe(200);
    expect(dataOf(run).id).toBe(res.body.dispatchId);

    // The same validation as POST /runs: an unknown group is a 400 with issues.
    const badBody = JSON.stringify({ mode: "all", groupIds: ["nope"] });
    const bad = await deliver(hook.id, badBody, sign(hook.secret, badBody));
    expect(bad.status).toBe(400);
    expect(ApiError.parse(bad.body).error.issues?.length).toBeGreaterThan(0);
  });

  it("a wrong secret, a tampered body or a missing signature is a 401 and writes nothing", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("gamma");
    const before = await rowCount();
    expectUnauthorized(await deliver(hook.id, body, sign("whsec_wrong", body)));
    expectUnauthorized(await deliver(hook.id, rowsBody("gammA"), sign(hook.secret, body)));
    expectUnauthorized(await deliver(hook.id, `${body} `, sign(hook.secret, body)));
    expectUnauthorized(await deliver(hook.id, body, null));
    expect(await rowCount()).toBe(before);
  });

  it("t more than 300 s away from now, either way, is a 401; within it is accepted", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("delta");
    const before = await rowCount();
    expectUnauthorized(await deliver(hook.id, body, sign(hook.secret, body, now() - 301)));
    expectUnauthorized(await deliver(hook.id, body, sign(hook.secret, body, now() + 330)));
    expect(await rowCount()).toBe(before);
    const ok = await deliver(hook.id, body, sign(hook.secret, body, now() - 250));
    expect(ok.status).toBe(202);
  });

  it("malformed signature headers are a 401 in the API's error shape", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("eps");
    const good = sign(hook.secret, body);
    const v1 = good.split("v1=")[1] ?? "";
    for (const header of [
      "",
      "garbage",
      `v1=${v1}`,
      `t=${now()}`,
      `t=soon,v1=${v1}`,
      `t=${now()},v1=${v1.slice(0, 10)}`,
      `t=${now()};v1=${v1}`,
      good.replace("v1=", "v2="),
    ]) {
      expectUnauthorized(await deliver(hook.id, body, header));
    }
  });

  it("a replayed request (same body, same t) acts once and gets the first answer again", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("zeta", "eta");
    // Explicit, distinct times: a clock tick between two `now()`s must not make the
    // "new t" below equal to this one.
    const signature = sign(hook.secret, body, now() - 10);
    const before = await rowCount();
    const first = await deliver(hook.id, body, signature);
    const again = await deliver(hook.id, body, signature);
    expect(first.status).toBe(202);
    expect(again.status).toBe(first.status);
    // The same answer, byte for byte (key order included).
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(again.headers.get("cellflow-replayed")).toBe("true");
    expect(await rowCount()).toBe(before + 2);

    // Copies arriving together: one of them acts, all get its answer.
    const body2 = rowsBody("theta");
    const sig2 = sign(hook.secret, body2);
    const copies = await Promise.all([1, 2, 3].map(() => deliver(hook.id, body2, sig2)));
    expect(copies.map((c) => c.status)).toEqual([202, 202, 202]);
    expect(new Set(copies.map((c) => JSON.stringify(c.body))).size).toBe(1);
    expect(await rowCount()).toBe(before + 3);

    // A new t is a new delivery, even with the same body.
    const resent = await deliver(hook.id, body, sign(hook.secret, body, now() - 20));
    expect(resent.status).toBe(202);
    expect(await rowCount()).toBe(before + 5);
  });

  it("a replayed run starts one dispatch and answers with its id again", async () => {
    const hook = await newHook("run");
    const body = JSON.stringify({ mode: "incomplete" });
    const signature = sign(hook.secret, body);
    const first = await deliver<{ dispatchId: string }>(hook.id, body, signature);
    const again = await deliver<{ dispatchId: string }>(hook.id, body, signature);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    const [row] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from dispatches where id = ${first.body.dispatchId}`,
    );
    expect(row?.n).toBe(1);
    const runs = await apiClient(key).GET("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(runs).runs.filter((r) => r.id === first.body.dispatchId)).toHaveLength(1);
  });

  it("a run copy signed again (a new t) with the same Idempotency-Key starts no second run", async () => {
    const hook = await newHook("run");
    const body = JSON.stringify({ mode: "all", groupIds: ["upper"] });
    const idem = { "idempotency-key": "provider-event-1" };
    const first = await deliver<{ dispatchId: string }>(
      hook.id,
      body,
      sign(hook.secret, body, now() - 10),
      idem,
    );
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.headers.get("cellflow-replayed")).toBeNull();
    // The provider's retry: a new t (a new delivery), the same key.
    const retry = await deliver<{ dispatchId: string }>(
      hook.id,
      body,
      sign(hook.secret, body, now() - 20),
      idem,
    );
    expect(retry.status).toBe(202);
    expect(retry.headers.get("cellflow-replayed")).toBe("true");
    expect(retry.body.dispatchId).toBe(first.body.dispatchId);
    // The keys are the table's: POST /runs with the key answers the same run.
    const viaApi = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId }, header: idem },
      body: { mode: "all", groupIds: ["upper"] },
    });
    expect(dataOf(viaApi)).toMatchObject({ dispatchId: first.body.dispatchId });
    // Another request with the key is a conflict, whichever way it comes.
    const other = JSON.stringify({ mode: "new", groupIds: ["upper"] });
    const conflicting = await deliver(hook.id, other, sign(hook.secret, other), idem);
    expect(conflicting.status).toBe(409);
    const [row] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from run_keys where key = ${idem["idempotency-key"]}`,
    );
    expect(row?.n).toBe(1);

    // An empty key is a 400 with issues (after the signature is checked), recorded nowhere.
    const empty = await deliver(hook.id, other, sign(hook.secret, other, now() - 30), {
      "idempotency-key": "",
    });
    expect(empty.status).toBe(400);
    expect(ApiError.parse(empty.body).error.issues?.map((i) => i.path)).toEqual([
      "idempotency-key",
    ]);
    expectUnauthorized(
      await deliver(hook.id, other, sign("whsec_wrong", other), { "idempotency-key": "" }),
    );
  });

  it("a signed but invalid body is a 400 with issues, and is not recorded as delivered", async () => {
    const hook = await newHook("insert_rows");
    const body = JSON.stringify({ rows: [{ data: { v: 42 } }] });
    const signature = sign(hook.secret, body);
    const before = await rowCount();
    for (let i = 0; i < 2; i++) {
      const res = await deliver(hook.id, body, signature);
      expect(res.status).toBe(400);
      expect(ApiError.parse(res.body).error.issues?.length).toBeGreaterThan(0);
    }
    for (const garbage of ["{", "", "[]", '{"rows":[{"data":{"v":"\\u0000"}}]}']) {
      const res = await deliver(hook.id, garbage, sign(hook.secret, garbage));
      expect(res.status, garbage).toBe(400);
    }
    expect(await rowCount()).toBe(before);
    const [recorded] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from hook_deliveries where hook_id = ${hook.id}`,
    );
    expect(recorded?.n).toBe(0);
  });

  it("a body over 1 MiB is a 413 before anything else", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("x".repeat(1024 * 1024));
    const res = await deliver(hook.id, body, sign(hook.secret, body));
    expect(res.status).toBe(413);
  });
});

describe("revoked, unknown and unreadable hooks", () => {
  it("a revoked hook refuses even correctly signed requests, as an unknown id does", async () => {
    const hook = await newHook("insert_rows");
    const revoke = await apiClient(key).DELETE("/api/tables/{id}/hooks/{hookId}", {
      params: { path: { id: tableId, hookId: hook.id } },
    });
    expect(revoke.response.status).toBe(204);
    expect(
      (
        await apiClient(key).DELETE("/api/tables/{id}/hooks/{hookId}", {
          params: { path: { id: tableId, hookId: hook.id } },
        })
      ).response.status,
    ).toBe(204);
    const body = rowsBody("iota");
    const before = await rowCount();
    const revoked = await deliver(hook.id, body, sign(hook.secret, body));
    expectUnauthorized(revoked);
    // Unknown ids answer identically, so the answer does not tell whether a hook exists.
    const unknown = await deliver("hook_doesnotexist0000000000", body, sign(hook.secret, body));
    expectUnauthorized(unknown);
    expect(unknown.body).toEqual(revoked.body);
    expect(await rowCount()).toBe(before);

    const list = await apiClient(key).GET("/api/tables/{id}/hooks", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).hooks.find((h) => h.id === hook.id)?.revokedAt).toEqual(expect.any(String));
    const missing = await apiClient(key).DELETE("/api/tables/{id}/hooks/{hookId}", {
      params: { path: { id: tableId, hookId: "hook_nope" } },
    });
    expect(missing.response.status).toBe(404);
    const other = await newWorkspace("other2");
    const foreign = await apiClient(other.key).DELETE("/api/tables/{id}/hooks/{hookId}", {
      params: { path: { id: tableId, hookId: hook.id } },
    });
    expect(foreign.response.status).toBe(404);
  });

  it("a secret that no longer decrypts (damaged, or the server key changed) is a 401, not a crash", async () => {
    const damaged = await newHook("insert_rows");
    await queryRows(
      db(),
      sql`update hooks set secret_ciphertext = 'AAAA.BBBB.CCCC' where id = ${damaged.id}`,
    );
    const body = rowsBody("kappa");
    expectUnauthorized(await deliver(damaged.id, body, sign(damaged.secret, body)));

    const hook = await newHook("insert_rows");
    process.env.CELLFLOW_SECRET_KEY = randomBytes(32).toString("hex");
    try {
      expectUnauthorized(await deliver(hook.id, body, sign(hook.secret, body)));
    } finally {
      process.env.CELLFLOW_SECRET_KEY = SERVER_KEY;
    }
    expect((await deliver(hook.id, body, sign(hook.secret, body))).status).toBe(202);
  });
});

describe("delivery records", () => {
  it("are pruned once no replay of them could verify any more", async () => {
    const hook = await newHook("insert_rows");
    const body = rowsBody("lambda");
    expect((await deliver(hook.id, body, sign(hook.secret, body))).status).toBe(202);
    await queryRows(
      db(),
      sql`insert into hook_deliveries (hook_id, signature_digest, status_code, response, created_at)
          values (${hook.id}, 'old', 202, '{}'::json, now() - interval '2 hours')`,
    );
    expect(await pruneHookDeliveries(db())).toBe(1);
    const left = await queryRows<{ d: string }>(
      db(),
      sql`select signature_digest as d from hook_deliveries where hook_id = ${hook.id}`,
    );
    expect(left).toHaveLength(1);
    expect(left[0]?.d).not.toBe("old");
  });
});
