import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

let key: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

describe("workflows API", () => {
  it("creates, reads, edits the draft and deploys numbered versions", async () => {
    const created = await apiClient(key).POST("/api/workflows", {
      body: { name: "Classify", definition: classifyDefinition },
    });
    expect(created.response.status).toBe(201);
    expect(dataOf(created).deployedVersion).toBeNull();
    const id = dataOf(created).id;

    const got = await apiClient(key).GET("/api/workflows/{id}", { params: { path: { id } } });
    expect(got.response.status).toBe(200);
    expect(dataOf(got).name).toBe("Classify");
    expect(dataOf(got).definition).toMatchObject(classifyDefinition);

    const renamed = await apiClient(key).PUT("/api/workflows/{id}", {
      params: { path: { id } },
      body: { name: "Sorter" },
    });
    expect(renamed.response.status).toBe(200);
    expect(dataOf(renamed).name).toBe("Sorter");

    const v1 = await apiClient(key).POST("/api/workflows/{id}/deploy", {
      params: { path: { id } },
    });
    const v2 = await apiClient(key).POST("/api/workflows/{id}/deploy", {
      params: { path: { id } },
    });
    expect([v1.response.status, dataOf(v1).version, dataOf(v2).version]).toEqual([201, 1, 2]);
    const after = await apiClient(key).GET("/api/workflows/{id}", { params: { path: { id } } });
    expect(dataOf(after).deployedVersion).toBe(2);
  });

  it("concurrent deploys get distinct, gapless versions", async () => {
    const body = dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: { name: "Busy", definition: classifyDefinition },
      }),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        apiClient(key).POST("/api/workflows/{id}/deploy", { params: { path: { id: body.id } } }),
      ),
    );
    expect(results.map((r) => dataOf(r).version).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  const invalid: [string, Schemas["WorkflowDefinition"], RegExp][] = [
    [
      "a cycle",
      {
        blocks: [
          { id: "a", type: "transform", expression: "1", next: "b" },
          { id: "b", type: "transform", expression: "1", next: "c" },
          { id: "c", type: "transform", expression: "1", next: "b" },
        ],
      },
      /cycle/,
    ],
    [
      "a dangling next",
      { blocks: [{ id: "a", type: "transform", expression: "1", next: "nope" }] },
      /unknown block "nope"/,
    ],
    [
      "two entry blocks",
      {
        blocks: [
          { id: "a", type: "transform", expression: "1" },
          { id: "b", type: "transform", expression: "2" },
        ],
      },
      /exactly one entry block/,
    ],
    [
      "an expression that does not parse",
      { blocks: [{ id: "a", type: "transform", expression: "1 +" }] },
      /does not parse/,
    ],
    [
      "a template that does not parse",
      { blocks: [{ id: "a", type: "http", method: "GET", url: "https://x/{{ inputs. }}" }] },
      /does not parse/,
    ],
    [
      "duplicate block ids",
      {
        blocks: [
          { id: "a", type: "wait", ms: 1 },
          { id: "a", type: "wait", ms: 2 },
        ],
      },
      /used twice/,
    ],
    [
      "a block pointing to itself",
      { blocks: [{ id: "a", type: "wait", ms: 1, next: "a" }] },
      /itself/,
    ],
  ];
  // A block type the API does not know is a wrong shape: the typed client cannot send it.
  it("refuses a definition with an unknown block type (400 with issues) and stores nothing", async () => {
    const res = await call<{ error: { code: string; issues: { message: string }[] } }>(
      "POST",
      "/api/workflows",
      { key, body: { name: "Bad", definition: { blocks: [{ id: "a", type: "teleport" }] } } },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.issues.map((i) => i.message).join("\n")).toMatch(/./);
  });
  for (const [what, definition, message] of invalid) {
    it(`refuses a definition with ${what} (400 with issues) and stores nothing`, async () => {
      const res = await apiClient(key).POST("/api/workflows", {
        body: { name: "Bad", definition },
      });
      expect(res.response.status).toBe(400);
      expect(res.error?.error.code).toBe("validation_failed");
      expect(res.error?.error.issues?.map((i) => i.message).join("\n")).toMatch(message);
    });
  }

  it("another workspace's workflow is 404 for every verb", async () => {
    const other = await newWorkspace("other");
    const body = dataOf(
      await apiClient(other.key).POST("/api/workflows", {
        body: { name: "Theirs", definition: classifyDefinition },
      }),
    );
    expect(
      (await apiClient(key).GET("/api/workflows/{id}", { params: { path: { id: body.id } } }))
        .response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(key).PUT("/api/workflows/{id}", {
          params: { path: { id: body.id } },
          body: { name: "mine" },
        })
      ).response.status,
    ).toBe(404);
    expect(
      (
        await apiClient(key).POST("/api/workflows/{id}/deploy", {
          params: { path: { id: body.id } },
        })
      ).response.status,
    ).toBe(404);
    const theirs = await apiClient(other.key).GET("/api/workflows/{id}", {
      params: { path: { id: body.id } },
    });
    expect(dataOf(theirs)).toMatchObject({ name: "Theirs", deployedVersion: null });
  });

  it("the list holds only the key's workspace's workflows, each with id, name, deployedVersion and updatedAt", async () => {
    const fresh = await newWorkspace("lister");
    const other = await newWorkspace("not listed");
    await apiClient(other.key).POST("/api/workflows", {
      body: { name: "Elsewhere", definition: classifyDefinition },
    });
    const empty = await apiClient(fresh.key).GET("/api/workflows");
    expect(empty.response.status).toBe(200);
    expect(dataOf(empty)).toMatchObject({ workflows: [] });
    const a = await apiClient(fresh.key).POST("/api/workflows", {
      body: { name: "A", definition: classifyDefinition },
    });
    await apiClient(fresh.key).POST("/api/workflows/{id}/deploy", {
      params: { path: { id: dataOf(a).id } },
    });
    const b = await apiClient(fresh.key).POST("/api/workflows", {
      body: { name: "B", definition: classifyDefinition },
    });
    const list = await apiClient(fresh.key).GET("/api/workflows");
    expect(list.response.status).toBe(200);
    expect(dataOf(list).workflows).toMatchObject([
      { id: dataOf(a).id, name: "A", deployedVersion: 1 },
      { id: dataOf(b).id, name: "B", deployedVersion: null },
    ]);
    for (const w of dataOf(list).workflows) expect(Date.parse(w.updatedAt)).not.toBeNaN();
  });
});
