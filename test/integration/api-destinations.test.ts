/**
 * The destinations routes (API.md "Schedules, destinations, views"): the secret is shown
 * once and never listed, it is stored sealed; URLs that are not http(s), or name this
 * machine or a private address, are refused at create (400) unless the private network
 * is allowed; PATCH switches `enabled`; DELETE takes the outbox with it; another
 * workspace's destinations answer 404; deliveries list newest first by status, page by
 * cursor, with lastError.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setDestinationPolicy, systemPolicy } from "@/net/outbound";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

process.env.CELLFLOW_SECRET_KEY ??= randomBytes(32).toString("base64");

const db = () => getDatabase().db;
let key: string;
let tableId: string;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  tableId = dataOf(
    await apiClient(key).POST("/api/tables", {
      body: { name: "dest", columns: [{ id: "v", name: "V", type: "text" }] },
    }),
  ).id;
});

const previous = process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK;
afterEach(() => {
  process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = previous;
});

const create = (url: string, name?: string) =>
  apiClient(key).POST("/api/tables/{id}/destinations", {
    params: { path: { id: tableId } },
    body: name === undefined ? { url } : { url, name },
  });

describe("destinations API", () => {
  it("shows the secret once, stores it sealed, lists without it, switches and deletes", async () => {
    const res = await create("https://example.com/in", "CRM");
    expect(res.response.status).toBe(201);
    const d = dataOf(res);
    expect(d).toMatchObject({ url: "https://example.com/in", name: "CRM", enabled: true, tableId });
    expect(d.secret).toMatch(/^whsec_/);
    const [stored] = await queryRows<{ c: string }>(
      db(),
      sql`select secret_ciphertext as c from destinations where id = ${d.id}`,
    );
    expect(stored?.c).not.toContain(d.secret);
    const list = dataOf(
      await apiClient(key).GET("/api/tables/{id}/destinations", {
        params: { path: { id: tableId } },
      }),
    );
    expect(JSON.stringify(list)).not.toContain(d.secret);
    expect(list.destinations.map((x) => x.id)).toContain(d.id);
    const off = await apiClient(key).PATCH("/api/tables/{id}/destinations/{destinationId}", {
      params: { path: { id: tableId, destinationId: d.id } },
      body: { enabled: false },
    });
    expect(dataOf(off).enabled).toBe(false);
    const del = await apiClient(key).DELETE("/api/tables/{id}/destinations/{destinationId}", {
      params: { path: { id: tableId, destinationId: d.id } },
    });
    expect(del.response.status).toBe(204);
    const again = await apiClient(key).DELETE("/api/tables/{id}/destinations/{destinationId}", {
      params: { path: { id: tableId, destinationId: d.id } },
    });
    expect(again.response.status).toBe(404);
  });

  it("refuses URLs that are not http(s), carry credentials, or name this machine or a private address", async () => {
    process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "0";
    for (const url of [
      "ftp://example.com/x",
      "not a url",
      "https://user:pw@example.com/",
      "http://localhost:8080/in",
      "http://127.0.0.1/in",
      "http://10.1.2.3/in",
      "http://[::1]/in",
      "http://169.254.169.254/latest",
    ]) {
      const res = await create(url);
      expect(res.response.status, url).toBe(400);
    }
    process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "1";
    expect((await create("http://127.0.0.1:9/in")).response.status).toBe(201);
  });

  it("judges a create's URL by the sender's destination policy, so a test policy governs both", async () => {
    process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "0";
    // A policy under which this public address is off limits: create must refuse it too.
    await setDestinationPolicy({
      resolve: systemPolicy.resolve,
      refuses: (address) => (address === "93.184.216.34" ? "a test range" : null),
    });
    try {
      const res = await create("http://93.184.216.34/in");
      expect(res.response.status).toBe(400);
      expect(JSON.stringify(res.error)).toContain("a test range");
      expect((await create("http://93.184.216.35/in")).response.status).toBe(201);
    } finally {
      await setDestinationPolicy();
    }
  });

  it("answers 404 for another workspace's destination and table", async () => {
    const d = dataOf(await create("https://example.com/mine"));
    const other = await newWorkspace("other");
    const them = apiClient(other.key);
    const path = { id: tableId, destinationId: d.id };
    expect(
      (await them.GET("/api/tables/{id}/destinations", { params: { path: { id: tableId } } }))
        .response.status,
    ).toBe(404);
    expect(
      (
        await them.PATCH("/api/tables/{id}/destinations/{destinationId}", {
          params: { path },
          body: { enabled: false },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (await them.DELETE("/api/tables/{id}/destinations/{destinationId}", { params: { path } }))
        .response.status,
    ).toBe(404);
    expect(
      (
        await them.GET("/api/tables/{id}/destinations/{destinationId}/deliveries", {
          params: { path },
        })
      ).response.status,
    ).toBe(404);
  });

  it("lists deliveries newest first, by status, a page at a time, with lastError", async () => {
    const d = dataOf(await create("https://example.com/paged"));
    for (let i = 0; i < 5; i++)
      await db().execute(
        sql`insert into destination_deliveries (id, destination_id, row_id, seq, body, status, attempts, last_error, next_attempt_at, created_at)
            values (${`dlv_${i}`}, ${d.id}, 'row_x', ${i + 1}, '{}', ${i % 2 === 0 ? "failed" : "pending"},
                    1, ${`HTTP 50${i}`}, now(), now() + make_interval(secs => ${i}))`,
      );
    const get = (query: {
      status?: "failed" | "pending";
      withError?: "true" | "false";
      cursor?: string;
      limit?: number;
    }) =>
      apiClient(key).GET("/api/tables/{id}/destinations/{destinationId}/deliveries", {
        params: { path: { id: tableId, destinationId: d.id }, query },
      });
    const failed = dataOf(await get({ status: "failed" }));
    expect(failed.deliveries.map((x) => x.id)).toEqual(["dlv_4", "dlv_2", "dlv_0"]);
    expect(failed.deliveries[0]).toMatchObject({
      status: "failed",
      lastError: "HTTP 504",
      attempts: 1,
      rowId: "row_x",
    });
    const first = dataOf(await get({ limit: 2 }));
    expect(first.deliveries.map((x) => x.id)).toEqual(["dlv_4", "dlv_3"]);
    expect(first.nextCursor).toBe("dlv_3");
    const second = dataOf(await get({ limit: 2, cursor: first.nextCursor ?? "" }));
    expect(second.deliveries.map((x) => x.id)).toEqual(["dlv_2", "dlv_1"]);
    const last = dataOf(await get({ limit: 2, cursor: second.nextCursor ?? "" }));
    expect(last).toMatchObject({ deliveries: [{ id: "dlv_0" }], nextCursor: null });
    expect((await get({ status: "pending" })).data?.deliveries[0]?.nextAttemptAt).toBeTruthy();
  });

  it("lists only the deliveries with an error when asked (failed and retrying), however many pending are newer", async () => {
    const d = dataOf(await create("https://example.com/problems"));
    // Oldest first: a failed one, a retrying one, then ten fresh pending ones without an
    // error; a page of 5 of everything pending would show no problem at all.
    const rows: [string, string, string | null][] = [
      ["dlv_f", "failed", "HTTP 404"],
      ["dlv_r", "pending", "HTTP 503"],
      ...Array.from({ length: 10 }, (_, i): [string, string, null] => [
        `dlv_n${i}`,
        "pending",
        null,
      ]),
    ];
    for (const [i, [id, status, lastError]] of rows.entries())
      await db().execute(
        sql`insert into destination_deliveries (id, destination_id, row_id, seq, body, status, attempts, last_error, next_attempt_at, created_at)
            values (${id}, ${d.id}, ${`row_${i}`}, 1, '{}', ${status}, ${lastError === null ? 0 : 2},
                    ${lastError}, now(), now() + make_interval(secs => ${i}))`,
      );
    const page = dataOf(
      await apiClient(key).GET("/api/tables/{id}/destinations/{destinationId}/deliveries", {
        params: {
          path: { id: tableId, destinationId: d.id },
          query: { withError: "true", limit: 5 },
        },
      }),
    );
    expect(page.deliveries.map((x) => [x.id, x.status, x.lastError])).toEqual([
      ["dlv_r", "pending", "HTTP 503"],
      ["dlv_f", "failed", "HTTP 404"],
    ]);
    const bad = await apiClient(key).GET(
      "/api/tables/{id}/destinations/{destinationId}/deliveries",
      {
        params: {
          path: { id: tableId, destinationId: d.id },
          query: { withError: "yes" as "true" },
        },
      },
    );
    expect(bad.response.status).toBe(400);
  });
});
