import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";

let key: string;
let workflowId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  workflowId = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: { name: "C", definition: classifyDefinition },
    }),
  ).id;
});

const columns: Schemas["Column"][] = [
  { id: "n", name: "N", type: "number" },
  { id: "size", name: "Size", type: "text" },
  { id: "note", name: "Note", type: "text" },
];
const group = (over: Partial<Schemas["WorkflowGroup"]> = {}): Schemas["WorkflowGroup"] => ({
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

describe("tables API", () => {
  it("creates, gets, lists and patches a table", async () => {
    const created = await apiClient(key).POST("/api/tables", {
      body: { name: "Companies", columns, groups: [group()] },
    });
    expect(created.response.status).toBe(201);
    expect(dataOf(created).rowCount).toBe(0);
    const id = dataOf(created).id;

    const got = await apiClient(key).GET("/api/tables/{id}", { params: { path: { id } } });
    expect(got.response.status).toBe(200);
    expect(dataOf(got).columns).toEqual(columns);
    expect(dataOf(got).groups).toEqual([group()]);

    const listed = await apiClient(key).GET("/api/tables");
    expect(dataOf(listed).tables.map((t) => t.id)).toContain(id);

    const patched = await apiClient(key).PATCH("/api/tables/{id}", {
      params: { path: { id } },
      body: {
        name: "Firms",
        columns: [...columns, { id: "tier", name: "Tier", type: "select", options: ["a", "b"] }],
      },
    });
    expect(patched.response.status).toBe(200);
    expect(dataOf(patched).name).toBe("Firms");
    expect(dataOf(patched).columns).toHaveLength(4);
    expect(dataOf(patched).groups).toEqual([group()]);
    expect(dataOf(patched).schemaVersion).toBe(2);
  });

  // Thunks: the workflow id exists only once beforeAll has run.
  const invalid: [string, () => Omit<Schemas["CreateTableRequest"], "name">, RegExp][] = [
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
    [
      "duplicate column ids",
      () => ({ columns: [...columns, ...columns.slice(0, 1)] }),
      /used twice/,
    ],
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
      const res = await apiClient(key).POST("/api/tables", { body });
      expect(res.response.status).toBe(400);
      expect(res.error?.error.code).toBe("validation_failed");
      expect(res.error?.error.issues?.map((i) => i.message).join("\n")).toMatch(message);

      const base = await apiClient(key).POST("/api/tables", { body: { name: "Base", columns } });
      const { name: _name, ...lists } = body;
      const patched = await apiClient(key).PATCH("/api/tables/{id}", {
        params: { path: { id: dataOf(base).id } },
        body: lists,
      });
      expect(patched.response.status).toBe(400);
      const after = await apiClient(key).GET("/api/tables/{id}", {
        params: { path: { id: dataOf(base).id } },
      });
      expect(dataOf(after).schemaVersion).toBe(dataOf(base).schemaVersion);
    });
  }

  it("concurrent patches of one table never lose an edit silently", async () => {
    const base = await apiClient(key).POST("/api/tables", { body: { name: "Race", columns } });
    const results = await Promise.all(
      ["one", "two", "three", "four"].map((n) =>
        apiClient(key).PATCH("/api/tables/{id}", {
          params: { path: { id: dataOf(base).id } },
          body: { name: n },
        }),
      ),
    );
    for (const r of results) expect([200, 409]).toContain(r.response.status);
    const final = await apiClient(key).GET("/api/tables/{id}", {
      params: { path: { id: dataOf(base).id } },
    });
    const applied = results.filter((r) => r.response.status === 200).length;
    expect(dataOf(final).schemaVersion).toBe(1 + applied);
  });

  it("another workspace's table is 404 and stays unchanged", async () => {
    const other = await newWorkspace("other");
    const theirs = await apiClient(other.key).POST("/api/tables", {
      body: { name: "Theirs", columns },
    });
    expect(
      (
        await apiClient(key).GET("/api/tables/{id}", {
          params: { path: { id: dataOf(theirs).id } },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(key).PATCH("/api/tables/{id}", {
          params: { path: { id: dataOf(theirs).id } },
          body: { name: "x" },
        })
      ).response.status,
    ).toBe(404);
    const list = await apiClient(key).GET("/api/tables");
    expect(dataOf(list).tables.map((t) => t.id)).not.toContain(dataOf(theirs).id);
    const still = await apiClient(other.key).GET("/api/tables/{id}", {
      params: { path: { id: dataOf(theirs).id } },
    });
    expect(dataOf(still).name).toBe("Theirs");
  });
});
