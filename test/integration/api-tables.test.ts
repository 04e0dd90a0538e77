import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";

let key: string;
let workflowId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  workflowId = (
    await call<{ id: string }>("POST", "/api/workflows", {
      key,
      body: { name: "C", definition: classifyDefinition },
    })
  ).body.id;
});

const columns = [
  { id: "n", name: "N", type: "number" },
  { id: "size", name: "Size", type: "text" },
  { id: "note", name: "Note", type: "text" },
];
const group = (over: Record<string, unknown> = {}) => ({
  id: "classify",
  name: "Classify",
  kind: "workflow",
  workflowId,
  version: "live",
  inputs: { n: "n" },
  outputs: [{ columnId: "size", from: "check" }],
  dependsOn: ["n"],
  autoRun: true,
  ...over,
});

type Err = {
  error: { code: string; message: string; issues: { path: string; message: string }[] };
};

describe("tables API", () => {
  it("creates, gets, lists and patches a table", async () => {
    const created = await call<{ id: string; rowCount: number; groups: unknown[] }>(
      "POST",
      "/api/tables",
      {
        key,
        body: { name: "Companies", columns, groups: [group()] },
      },
    );
    expect(created.status).toBe(201);
    expect(created.body.rowCount).toBe(0);
    const id = created.body.id;

    const got = await call<{ name: string; columns: unknown[]; groups: unknown[] }>(
      "GET",
      `/api/tables/${id}`,
      { key },
    );
    expect(got.status).toBe(200);
    expect(got.body.columns).toEqual(columns);
    expect(got.body.groups).toEqual([group()]);

    const listed = await call<{ tables: { id: string }[] }>("GET", "/api/tables", { key });
    expect(listed.body.tables.map((t) => t.id)).toContain(id);

    const patched = await call<{
      name: string;
      columns: unknown[];
      groups: unknown[];
      schemaVersion: number;
    }>("PATCH", `/api/tables/${id}`, {
      key,
      body: {
        name: "Firms",
        columns: [...columns, { id: "tier", name: "Tier", type: "select", options: ["a", "b"] }],
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe("Firms");
    expect(patched.body.columns).toHaveLength(4);
    expect(patched.body.groups).toEqual([group()]);
    expect(patched.body.schemaVersion).toBe(2);
  });

  // Thunks: the workflow id exists only once beforeAll has run.
  const invalid: [string, () => Record<string, unknown>, RegExp][] = [
    [
      "an output column owned by two groups",
      () => ({ groups: [group(), group({ id: "again", dependsOn: [], inputs: {} })] }),
      /already an output of group "classify"/,
    ],
    [
      "an unknown column",
      () => ({ groups: [group({ inputs: { n: "missing" } })] }),
      /unknown column "missing"/,
    ],
    [
      "a group depending on its own output",
      () => ({ groups: [group({ dependsOn: ["size"] })] }),
      /reads its own output/,
    ],
    [
      "a dependency cycle",
      () => ({
        groups: [
          group({
            id: "a",
            outputs: [{ columnId: "size", from: "x" }],
            dependsOn: ["note"],
            inputs: {},
          }),
          group({
            id: "b",
            outputs: [{ columnId: "note", from: "x" }],
            dependsOn: ["size"],
            inputs: {},
          }),
        ],
      }),
      /dependency cycle/,
    ],
    [
      "an unknown workflow",
      () => ({ groups: [group({ workflowId: "wf_nope" })] }),
      /unknown workflow/,
    ],
    [
      "an unknown enrichment",
      () => ({ groups: [{ id: "e", name: "E", kind: "enrichment", enrichmentId: "astrology" }] }),
      /unknown enrichment "astrology"/,
    ],
    ["duplicate column ids", () => ({ columns: [...columns, columns[0]] }), /used twice/],
    [
      "a select column without options",
      () => ({ columns: [{ id: "s", name: "S", type: "select" }] }),
      /needs options/,
    ],
    [
      "a bad column id",
      () => ({ columns: [{ id: "Bad Id", name: "S", type: "text" }] }),
      /must match/,
    ],
  ];
  for (const [what, patch, message] of invalid) {
    it(`refuses a schema with ${what}, on create and on patch, and stores nothing`, async () => {
      const body = { name: "Bad", columns, groups: [], ...patch() };
      const res = await call<Err>("POST", "/api/tables", { key, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.issues.map((i) => i.message).join("\n")).toMatch(message);

      const base = await call<{ id: string; schemaVersion: number }>("POST", "/api/tables", {
        key,
        body: { name: "Base", columns },
      });
      const { name: _name, ...lists } = body;
      const patched = await call<Err>("PATCH", `/api/tables/${base.body.id}`, { key, body: lists });
      expect(patched.status).toBe(400);
      const after = await call<{ schemaVersion: number }>("GET", `/api/tables/${base.body.id}`, {
        key,
      });
      expect(after.body.schemaVersion).toBe(base.body.schemaVersion);
    });
  }

  it("concurrent patches of one table never lose an edit silently", async () => {
    const base = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "Race", columns },
    });
    const results = await Promise.all(
      ["one", "two", "three", "four"].map((n) =>
        call<{ name: string }>("PATCH", `/api/tables/${base.body.id}`, { key, body: { name: n } }),
      ),
    );
    for (const r of results) expect([200, 409]).toContain(r.status);
    const final = await call<{ name: string; schemaVersion: number }>(
      "GET",
      `/api/tables/${base.body.id}`,
      { key },
    );
    const applied = results.filter((r) => r.status === 200).length;
    expect(final.body.schemaVersion).toBe(1 + applied);
  });

  it("another workspace's table is 404 and stays unchanged", async () => {
    const other = await newWorkspace("other");
    const theirs = await call<{ id: string }>("POST", "/api/tables", {
      key: other.key,
      body: { name: "Theirs", columns },
    });
    expect((await call("GET", `/api/tables/${theirs.body.id}`, { key })).status).toBe(404);
    expect(
      (await call("PATCH", `/api/tables/${theirs.body.id}`, { key, body: { name: "x" } })).status,
    ).toBe(404);
    const list = await call<{ tables: { id: string }[] }>("GET", "/api/tables", { key });
    expect(list.body.tables.map((t) => t.id)).not.toContain(theirs.body.id);
    const still = await call<{ name: string }>("GET", `/api/tables/${theirs.body.id}`, {
      key: other.key,
    });
    expect(still.body.name).toBe("Theirs");
  });
});
