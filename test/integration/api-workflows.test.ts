import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";

let key: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

describe("workflows API", () => {
  it("creates, reads, edits the draft and deploys numbered versions", async () => {
    const created = await call<{ id: string; deployedVersion: null }>("POST", "/api/workflows", {
      key,
      body: { name: "Classify", definition: classifyDefinition },
    });
    expect(created.status).toBe(201);
    expect(created.body.deployedVersion).toBeNull();
    const id = created.body.id;

    const got = await call<{ name: string; definition: unknown }>("GET", `/api/workflows/${id}`, {
      key,
    });
    expect(got.status).toBe(200);
    expect(got.body.name).toBe("Classify");
    expect(got.body.definition).toMatchObject(classifyDefinition);

    const renamed = await call<{ name: string }>("PUT", `/api/workflows/${id}`, {
      key,
      body: { name: "Sorter" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("Sorter");

    const v1 = await call<{ version: number }>("POST", `/api/workflows/${id}/deploy`, { key });
    const v2 = await call<{ version: number }>("POST", `/api/workflows/${id}/deploy`, { key });
    expect([v1.status, v1.body.version, v2.body.version]).toEqual([201, 1, 2]);
    const after = await call<{ deployedVersion: number }>("GET", `/api/workflows/${id}`, { key });
    expect(after.body.deployedVersion).toBe(2);
  });

  it("concurrent deploys get distinct, gapless versions", async () => {
    const { body } = await call<{ id: string }>("POST", "/api/workflows", {
      key,
      body: { name: "Busy", definition: classifyDefinition },
    });
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        call<{ version: number }>("POST", `/api/workflows/${body.id}/deploy`, { key }),
      ),
    );
    expect(results.map((r) => r.body.version).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  const invalid: [string, unknown, RegExp][] = [
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
    ["an unknown block type", { blocks: [{ id: "a", type: "teleport" }] }, /./],
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
  for (const [what, definition, message] of invalid) {
    it(`refuses a definition with ${what} (400 with issues) and stores nothing`, async () => {
      const res = await call<{ error: { code: string; issues: { message: string }[] } }>(
        "POST",
        "/api/workflows",
        {
          key,
          body: { name: "Bad", definition },
        },
      );
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.issues.map((i) => i.message).join("\n")).toMatch(message);
    });
  }

  it("another workspace's workflow is 404 for every verb", async () => {
    const other = await newWorkspace("other");
    const { body } = await call<{ id: string }>("POST", "/api/workflows", {
      key: other.key,
      body: { name: "Theirs", definition: classifyDefinition },
    });
    expect((await call("GET", `/api/workflows/${body.id}`, { key })).status).toBe(404);
    expect(
      (await call("PUT", `/api/workflows/${body.id}`, { key, body: { name: "mine" } })).status,
    ).toBe(404);
    expect((await call("POST", `/api/workflows/${body.id}/deploy`, { key })).status).toBe(404);
    const theirs = await call<{ name: string; deployedVersion: null }>(
      "GET",
      `/api/workflows/${body.id}`,
      {
        key: other.key,
      },
    );
    expect(theirs.body).toMatchObject({ name: "Theirs", deployedVersion: null });
  });

  it("the list holds only the key's workspace's workflows, each with id, name, deployedVersion and updatedAt", async () => {
    const fresh = await newWorkspace("lister");
    const other = await newWorkspace("not listed");
    await call("POST", "/api/workflows", {
      key: other.key,
      body: { name: "Elsewhere", definition: classifyDefinition },
    });
    const empty = await call<{ workflows: unknown[] }>("GET", "/api/workflows", { key: fresh.key });
    expect(empty).toMatchObject({ status: 200, body: { workflows: [] } });
    const a = await call<{ id: string }>("POST", "/api/workflows", {
      key: fresh.key,
      body: { name: "A", definition: classifyDefinition },
    });
    await call("POST", `/api/workflows/${a.body.id}/deploy`, { key: fresh.key });
    const b = await call<{ id: string }>("POST", "/api/workflows", {
      key: fresh.key,
      body: { name: "B", definition: classifyDefinition },
    });
    const list = await call<{
      workflows: { id: string; name: string; deployedVersion: number | null; updatedAt: string }[];
    }>("GET", "/api/workflows", { key: fresh.key });
    expect(list.status).toBe(200);
    expect(list.body.workflows).toMatchObject([
      { id: a.body.id, name: "A", deployedVersion: 1 },
      { id: b.body.id, name: "B", deployedVersion: null },
    ]);
    for (const w of list.body.workflows) expect(Date.parse(w.updatedAt)).not.toBeNaN();
  });
});
