/**
 * Version history (API.md "Workflows: history"): every deploy is kept and listed newest
 * first; a version reads back with its definition; deploying an earlier version writes a
 * copy of it as the next version (`rolledBackFrom`), numbered gaplessly with plain
 * deploys, leaving the draft alone; a group on "deployed" runs the rolled-back definition
 * on its next cell. Another workspace's workflow, or an unknown version, is a 404.
 */

import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

let key: string;
beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  key = (await newWorkspace()).key;
});

const says = (word: string): Schemas["WorkflowDefinition"] => ({
  inputs: [],
  blocks: [{ id: "v", type: "transform", expression: `'${word}'` }],
});

async function newWorkflow(word: string): Promise<string> {
  return dataOf(
    await apiClient(key).POST("/api/workflows", { body: { name: word, definition: says(word) } }),
  ).id;
}

async function editDraft(id: string, word: string): Promise<void> {
  const r = await apiClient(key).PUT("/api/workflows/{id}", {
    params: { path: { id } },
    body: { definition: says(word) },
  });
  expect(r.response.status).toBe(200);
}

async function deploy(id: string, version?: number) {
  const r = await apiClient(key).POST("/api/workflows/{id}/deploy", {
    params: { path: { id } },
    ...(version === undefined ? {} : { body: { version } }),
  });
  return { status: r.response.status, body: r.data, error: r.error };
}

async function versions(id: string) {
  return dataOf(
    await apiClient(key).GET("/api/workflows/{id}/versions", { params: { path: { id } } }),
  ).versions;
}

async function versionDetail(id: string, version: number) {
  return dataOf(
    await apiClient(key).GET("/api/workflows/{id}/versions/{version}", {
      params: { path: { id, version: String(version) } },
    }),
  );
}

describe("workflow history API", () => {
  it("lists every deploy newest first with its time, and reads each back with the definition it froze", async () => {
    const id = await newWorkflow("one");
    expect(await versions(id)).toEqual([]);
    await deploy(id);
    await editDraft(id, "two");
    await deploy(id);
    const list = await versions(id);
    expect(list.map((v) => [v.version, v.rolledBackFrom])).toEqual([
      [2, null],
      [1, null],
    ]);
    for (const v of list) expect(Date.parse(v.deployedAt)).not.toBeNaN();
    expect(Date.parse(list[0]?.deployedAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(list[1]?.deployedAt ?? ""),
    );
    const v1 = await versionDetail(id, 1);
    expect(v1).toMatchObject({ version: 1, rolledBackFrom: null, definition: says("one") });
    expect((await versionDetail(id, 2)).definition).toEqual(says("two"));
  });

  it("deploying an earlier version writes a copy as the next version with rolledBackFrom and leaves the draft alone", async () => {
    const id = await newWorkflow("one");
    await deploy(id);
    await editDraft(id, "two");
    await deploy(id);
    await editDraft(id, "draft");
    const rolled = await deploy(id, 1);
    expect(rolled).toMatchObject({ status: 201, body: { version: 3, rolledBackFrom: 1 } });
    expect(await deploy(id)).toMatchObject({
      status: 201,
      body: { version: 4, rolledBackFrom: null },
    });
    expect((await versions(id)).map((v) => [v.version, v.rolledBackFrom])).toEqual([
      [4, null],
      [3, 1],
      [2, null],
      [1, null],
    ]);
    expect(await versionDetail(id, 3)).toMatchObject({
      rolledBackFrom: 1,
      definition: says("one"),
    });
    expect((await versionDetail(id, 4)).definition).toEqual(says("draft"));
    const wf = dataOf(
      await apiClient(key).GET("/api/workflows/{id}", { params: { path: { id } } }),
    );
    expect([wf.deployedVersion, wf.definition]).toEqual([4, says("draft")]);
  });

  it("an unknown version is a 404 in the API's error shape and deploys nothing", async () => {
    const id = await newWorkflow("one");
    await deploy(id);
    const rollback = await deploy(id, 7);
    expect(rollback.status).toBe(404);
    expect(rollback.error?.error.code).toBe("not_found");
    for (const version of ["7", "0", "x", "1.5", "99999999999"]) {
      const res = await apiClient(key).GET("/api/workflows/{id}/versions/{version}", {
        params: { path: { id, version } },
      });
      expect([version, res.response.status, res.error?.error.code]).toEqual([
        version,
        404,
        "not_found",
      ]);
    }
    expect((await versions(id)).map((v) => v.version)).toEqual([1]);
  });

  it("a version that is not a version number is a 400; an empty body or {} deploys the draft", async () => {
    const id = await newWorkflow("one");
    for (const version of [0, -1, 1.5]) {
      const res = await deploy(id, version);
      expect([version, res.status, res.error?.error.code]).toEqual([
        version,
        400,
        "validation_failed",
      ]);
    }
    const empty = await apiClient(key).POST("/api/workflows/{id}/deploy", {
      params: { path: { id } },
      body: {},
    });
    expect([empty.response.status, empty.data]).toEqual([
      201,
      { version: 1, rolledBackFrom: null },
    ]);
    expect(await deploy(id)).toMatchObject({ status: 201, body: { version: 2 } });
  });

  it("another workspace's workflow is 404 for the history routes and a rollback", async () => {
    const other = await newWorkspace("other");
    const theirs = dataOf(
      await apiClient(other.key).POST("/api/workflows", {
        body: { name: "Theirs", definition: says("theirs") },
      }),
    ).id;
    await apiClient(other.key).POST("/api/workflows/{id}/deploy", {
      params: { path: { id: theirs } },
    });
    const list = await apiClient(key).GET("/api/workflows/{id}/versions", {
      params: { path: { id: theirs } },
    });
    const one = await apiClient(key).GET("/api/workflows/{id}/versions/{version}", {
      params: { path: { id: theirs, version: "1" } },
    });
    expect([list.response.status, one.response.status]).toEqual([404, 404]);
    expect((await deploy(theirs, 1)).status).toBe(404);
    const still = await apiClient(other.key).GET("/api/workflows/{id}/versions", {
      params: { path: { id: theirs } },
    });
    expect(dataOf(still).versions.map((v) => v.version)).toEqual([1]);
  });

  it("concurrent deploys and rollbacks get distinct, gapless versions", async () => {
    const id = await newWorkflow("one");
    await deploy(id);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => deploy(id, i % 2 === 0 ? 1 : undefined)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(results.map((r) => r.body?.version ?? 0).sort((a, b) => a - b)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    const list = await versions(id);
    expect(list.map((v) => v.version)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(list.filter((v) => v.rolledBackFrom === 1)).toHaveLength(5);
  });

  it("after a rollback a group on deployed runs the rolled-back definition on its next cell", async () => {
    const id = await newWorkflow("first");
    await deploy(id);
    await editDraft(id, "second");
    await deploy(id);
    await editDraft(id, "draft");
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: id,
      outputs: { out: "v" },
      group: { version: "deployed" },
    });
    const rowId = rowIds[0] as string;
    let lastExecution: string | undefined;
    // A run's output once its own execution (not the previous run's) completed.
    const runToOutput = async () => {
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      });
      let row: Schemas["RowView"] | undefined;
      const done = await waitFor(async () => {
        row = dataOf(
          await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
            params: { path: { id: tableId, rowId } },
          }),
        );
        const cell = row.cells.g;
        return cell?.status === "completed" && cell.executionId !== lastExecution;
      }, 60_000);
      expect(done, JSON.stringify(row)).toBe(true);
      lastExecution = row?.cells.g?.executionId;
      return row?.data.out;
    };
    expect(await runToOutput()).toBe("second");
    expect(await deploy(id, 1)).toMatchObject({ body: { version: 3, rolledBackFrom: 1 } });
    expect(await runToOutput()).toBe("first");
  });
});
