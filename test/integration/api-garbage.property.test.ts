/**
 * Generated garbage against every route: whatever arrives, the answer is the API error
 * shape with a 4xx status (never a 500), and a refused request writes nothing.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { listRoutes } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

let key: string;
const realIds: Record<string, string> = {};
let routes: { template: string; methods: string[] }[] = [];

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  realIds.id = (
    await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "T", columns: [{ id: "n", name: "N", type: "number" }] },
    })
  ).body.id;
  realIds.rowId = (
    await call<{ rows: { id: string }[] }>("POST", `/api/tables/${realIds.id}/rows`, {
      key,
      body: { rows: [{ data: { n: 1 } }] },
    })
  ).body.rows[0]?.id as string;
  realIds.workflowId = (
    await call<{ id: string }>("POST", "/api/workflows", {
      key,
      body: { name: "W", definition: classifyDefinition },
    })
  ).body.id;
  // The event stream stays open by design; its bad-input cases have their own tests.
  routes = (await listRoutes()).filter((r) => !r.template.endsWith("/events"));
});

async function throwawayTable(): Promise<string> {
  const t = await call<{ id: string }>("POST", "/api/tables", { key, body: { name: "doomed" } });
  return t.body.id;
}

const segment = fc.oneof(
  fc.constant("<real>"),
  // "." and ".." are resolved away by URL parsing before any route sees them.
  fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s !== "." && s !== ".."),
  fc.stringMatching(/^[a-z]{2,4}_[0-9a-z]{1,30}$/),
  fc.constantFrom("%00", "'; select 1; --", "null", "0", "-1", "%F0%9F%98%80"),
);

const garbageBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc
    .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }))
    .map((v) => JSON.stringify(v)),
  fc
    .record({
      name: fc.anything(),
      rows: fc.anything(),
      data: fc.anything(),
      definition: fc.anything(),
      columns: fc.anything(),
    })
    .map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "",
    "{",
    "[]",
    "null",
    '{"rows":[{"data":{"n":"NaN"}}]}',
    '{"data":{"n":"\\u0000"}}',
    '{"name":"\\udc00"}',
  ),
);

const keyChoice = fc.constantFrom<"valid" | "none" | "garbage">(
  "valid",
  "valid",
  "valid",
  "none",
  "garbage",
);

describe("garbage sent to every route", () => {
  it("never gets a 500, always the error shape, and writes nothing when refused", async () => {
    expect(routes.length).toBeGreaterThanOrEqual(9);
    const routeArb = fc.constantFrom(
      ...routes.flatMap((r) => r.methods.map((m) => ({ template: r.template, method: m }))),
    );
    await fc.assert(
      fc.asyncProperty(
        routeArb,
        fc.array(segment, { minLength: 2, maxLength: 2 }),
        garbageBody,
        keyChoice,
        async (route, segs, body, keyKind) => {
          // Deleting the shared table would leave every later case a plain 404: a table of
          // its own is deleted instead.
          const ids =
            route.method === "DELETE" && route.template === "/api/tables/[id]"
              ? { ...realIds, id: await throwawayTable() }
              : realIds;
          let i = 0;
          const path = route.template.replace(/\[([a-zA-Z]+)\]/g, (_m, name: string) => {
            const seg = segs[i++] ?? "<real>";
            return seg === "<real>" ? (ids[name] ?? "x") : encodeURIComponent(seg);
          });
          const k = keyKind === "valid" ? key : keyKind === "garbage" ? "cf_garbage" : null;
          const before = await dbFingerprint();
          const res = await call(route.method, path, {
            key: route.template.includes("/admin/") ? "not-the-admin-token" : k,
            rawBody: route.method === "GET" || route.method === "DELETE" ? undefined : body,
          });
          expect(res.status, `${route.method} ${path} ${body.slice(0, 200)}`).not.toBe(500);
          if (res.status >= 400) {
            expect([400, 401, 404, 405, 409, 413]).toContain(res.status);
            if (res.status !== 405) ApiError.parse(res.body);
            expect(await dbFingerprint(), `${route.method} ${path} wrote although refused`).toBe(
              before,
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  }, 120_000);
});
