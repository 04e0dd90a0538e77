import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

let key: string;
const db = () => getDatabase().db;

type Row = {
  id: string;
  data: Record<string, unknown>;
  cells: Record<string, { status: string; executionId: string; outcome: string | null }>;
};

async function wf(
  blocks: Schemas["Block"][],
  inputs: Schemas["WorkflowInput"][] = [],
): Promise<string> {
  const r = await apiClient(key).POST("/api/workflows", {
    body: { name: "w", definition: { inputs, blocks } },
  });
  return dataOf(r).id;
}

const row = async (t: string, id: string) =>
  dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: id } },
    }),
  );
const settled = (r: Row) =>
  Object.values(r.cells).every((c) => !["queued", "running"].includes(c.status));

async function waitRow(t: string, id: string, check: (r: Row) => boolean): Promise<Row> {
  let last: Row | undefined;
  const ok = await waitFor(async () => {
    last = await row(t, id);
    return check(last);
  }, 30_000);
  if (!ok) throw new Error(`row never reached the expected state: ${JSON.stringify(last)}`);
  return last as Row;
}

let upper: string;
let slowUpper: string;
let empty: string;
let failing: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  upper = await wf(upperDefinition.blocks, upperDefinition.inputs);
  slowUpper = await wf(
    [{ id: "pause", type: "wait", ms: 1500, next: "out" }, ...upperDefinition.blocks],
    upperDefinition.inputs,
  );
  empty = await wf([{ id: "out", type: "transform", expression: "null" }]);
  failing = await wf([{ id: "out", type: "fail", message: "nope" }]);
});

/** A workflow group reading column `input` as `v` and writing block "out" to `output`. */
function autoGroup(
  id: string,
  workflowId: string,
  input: string,
  output: string,
  dependsOn: string[],
  autoRun = true,
): Schemas["WorkflowGroup"] {
  return {
    id,
    name: id.toUpperCase(),
    kind: "workflow" as const,
    workflowId,
    inputs: { v: input },
    outputs: [{ columnId: output, from: "out" }],
    dependsOn,
    autoRun,
  };
}

/** A table whose one auto-run group takes 1.5 s, and a row that starts it. */
async function slowRow(src: string): Promise<{ t: string; id: string }> {
  const table = await apiClient(key).POST("/api/tables", {
    body: {
      name: "slow",
      columns: ["src", "a"].map((id) => ({ id, name: id, type: "text" as const })),
      groups: [autoGroup("ga", slowUpper, "src", "a", ["src"], true)],
    },
  });
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(table).id } },
    body: { rows: [{ data: { src } }] },
  });
  return { t: dataOf(table).id, id: dataOf(ins).rows[0]?.id as string };
}

async function chainTable(extra: Schemas["WorkflowGroup"][] = []): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "chain",
      columns: ["src", "a", "b", "flag", "e", "f", "m"].map((id) => ({
        id,
        name: id,
        type: id === "flag" ? ("boolean" as const) : ("text" as const),
      })),
      groups: [
        autoGroup("ga", upper, "src", "a", ["src"], true),
        autoGroup("gb", upper, "a", "b", ["a", "flag"], true),
        ...extra,
      ],
    },
  });
  return dataOf(t).id;
}

describe("auto-run", () => {
  it("inserted rows fire the groups whose dependencies are met, and the cascade chains them", async () => {
    const t = await chainTable();
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: t } },
      body: {
        rows: [
          { data: { src: "x", flag: true } },
          { data: { src: "y", flag: false } },
          { data: {} },
        ],
      },
    });
    const [r1, r2, r3] = dataOf(ins).rows.map((r) => r.id) as [string, string, string];
    expect((await waitRow(t, r1, (r) => r.cells.gb?.status === "completed")).data).toEqual({
      src: "x",
      flag: true,
      a: "X",
      b: "X",
    });
    // flag false: a checkbox that is off is an unmet dependency, so B never fires.
    const second = await waitRow(t, r2, (r) => r.cells.ga?.status === "completed");
    expect(second.data).toEqual({ src: "y", flag: false, a: "Y" });
    expect(second.cells.gb).toBeUndefined();
    expect((await row(t, r3)).cells).toEqual({});
    // Edits that make nothing eligible leave no trace in the table's runs.
    const before = await apiClient(key).GET("/api/tables/{id}/runs", {
      params: { path: { id: t } },
    });
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: r3 } },
      body: { data: { e: "unrelated" } },
    });
    const after = await apiClient(key).GET("/api/tables/{id}/runs", {
      params: { path: { id: t } },
    });
    expect(dataOf(after).runs).toHaveLength(dataOf(before).runs.length);
    // Ticking the box fires B.
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: r2 } },
      body: { data: { flag: true } },
    });
    expect((await waitRow(t, r2, (r) => r.cells.gb?.status === "completed")).data.b).toBe("Y");
  });

  it("an edit of a dependency re-runs exactly its dependents, left to right", async () => {
    const t = await chainTable([autoGroup("gm", upper, "src", "m", ["src"], false)]);
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: t } },
      body: { rows: [{ data: { src: "p", flag: true, e: "keep" } }] },
    });
    const id = dataOf(ins).rows[0]?.id as string;
    const first = await waitRow(t, id, (r) => r.cells.gb?.status === "completed");
    // A manual run of the non-auto group ignores dependencies and keeps its result on edits.
    const manual = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t } },
      body: { mode: "all", groupIds: ["gm"] },
    });
    expect(manual.response.status).toBe(202);
    await waitRow(t, id, (r) => r.cells.gm?.status === "completed");

    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: id } },
      body: { data: { a: "hand" } },
    });
    const afterA = await waitRow(
      t,
      id,
      (r) =>
        r.cells.gb?.status === "completed" &&
        r.cells.gb.executionId !== first.cells.gb?.executionId,
    );
    expect(afterA.data).toMatchObject({ src: "p", a: "hand", b: "HAND", m: "P" });
    expect(afterA.cells.ga?.executionId).toBe(first.cells.ga?.executionId);

    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: id } },
      body: { data: { src: "q" } },
    });
    const afterSrc = await waitRow(t, id, (r) => r.data.b === "Q" && settled(r));
    expect(afterSrc.data).toMatchObject({ src: "q", a: "Q", b: "Q", e: "keep", m: "P" });
    expect(afterSrc.cells.ga?.executionId).not.toBe(first.cells.ga?.executionId);
  });

  it("a group that completed with empty outputs does not loop; error and cancelled cells are not retried", async () => {
    const t = await apiClient(key).POST("/api/tables", {
      body: {
        name: "loops",
        columns: ["src", "e", "f", "other"].map((id) => ({ id, name: id, type: "text" as const })),
        groups: [
          {
            id: "ge",
            name: "E",
            kind: "workflow" as const,
            workflowId: empty,
            outputs: [{ columnId: "e", from: "out" }],
            dependsOn: ["src"],
            autoRun: true,
          },
          {
            id: "gf",
            name: "F",
            kind: "workflow" as const,
            workflowId: failing,
            outputs: [{ columnId: "f", from: "out" }],
            dependsOn: ["src"],
            autoRun: true,
          },
        ],
      },
    });
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: dataOf(t).id } },
      body: { rows: [{ data: { src: "s" } }] },
    });
    const id = dataOf(ins).rows[0]?.id as string;
    const done = await waitRow(
      dataOf(t).id,
      id,
      (r) => r.cells.ge?.status === "completed" && r.cells.gf?.status === "error",
    );
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: dataOf(t).id, rowId: id } },
      body: { data: { other: "unrelated edit" } },
    });
    // Wait until the worker is idle, then check nothing ran again.
    expect(
      await waitFor(async () => {
        const [j] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from graphile_worker.jobs`,
        );
        return j?.n === 0;
      }, 30_000),
    ).toBe(true);
    const again = await row(dataOf(t).id, id);
    expect(again.cells.ge?.executionId).toBe(done.cells.ge?.executionId);
    expect(again.cells.gf?.executionId).toBe(done.cells.gf?.executionId);
    const [attempts] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where kind = 'cell' and data->>'rowId' = ${id} and data->>'status' = 'running'`,
    );
    expect(attempts?.n).toBe(2);
  });

  it("an edit during a run cancels the stale attempt and re-runs it on the new value", async () => {
    const { t, id } = await slowRow("old");
    const running = await waitRow(t, id, (r) => r.cells.ga?.status === "running");
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: t, rowId: id } },
      body: { data: { src: "new" } },
    });
    const final = await waitRow(t, id, (r) => r.cells.ga?.status === "completed");
    expect(final.data.a).toBe("NEW");
    expect(final.cells.ga?.executionId).not.toBe(running.cells.ga?.executionId);
    const stale = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where kind = 'cell' and data->>'executionId' = ${running.cells.ga?.executionId ?? ""}
            and data->>'status' = 'completed'`,
    );
    expect(stale[0]?.n).toBe(0);
  });

  it("adding an auto-run group runs it on the rows where it is eligible", async () => {
    const t = await apiClient(key).POST("/api/tables", {
      body: {
        name: "later",
        columns: ["src", "a"].map((id) => ({ id, name: id, type: "text" as const })),
      },
    });
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: dataOf(t).id } },
      body: { rows: [{ data: { src: "k" } }, { data: {} }] },
    });
    const [with_, without] = dataOf(ins).rows.map((r) => r.id) as [string, string];
    await apiClient(key).PATCH("/api/tables/{id}", {
      params: { path: { id: dataOf(t).id } },
      body: {
        groups: [autoGroup("ga", upper, "src", "a", ["src"], true)],
      },
    });
    expect(
      (await waitRow(dataOf(t).id, with_, (r) => r.cells.ga?.status === "completed")).data.a,
    ).toBe("K");
    expect((await row(dataOf(t).id, without)).cells).toEqual({});
  });

  it("a row deleted mid-run stops its cells and nothing errors", async () => {
    const { t, id } = await slowRow("bye");
    await waitRow(t, id, (r) => r.cells.ga?.status === "running");
    expect(
      (
        await apiClient(key).DELETE("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: t, rowId: id } },
        })
      ).response.status,
    ).toBe(204);
    expect(
      await waitFor(async () => {
        const [j] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from graphile_worker.jobs`,
        );
        return j?.n === 0;
      }, 30_000),
    ).toBe(true);
    const [left] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from cells where row_id = ${id}`,
    );
    expect(left?.n).toBe(0);
    const [errors] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t} and kind = 'cell' and data->>'status' = 'error'`,
    );
    expect(errors?.n).toBe(0);
  });

  it("a Stop ends the cascade: the group after a stopped one never fires on its partial output", async () => {
    // ga writes `a` from its first block, then waits; gb is auto-run on `a`.
    const firstThenWait = await wf(
      [
        { id: "first", type: "transform", expression: "$uppercase(inputs.v)", next: "hold" },
        { id: "hold", type: "wait", ms: 30_000 },
      ],
      [{ name: "v", type: "text", required: true }],
    );
    const table = await apiClient(key).POST("/api/tables", {
      body: {
        name: "stop-cascade",
        columns: ["src", "a", "b"].map((id) => ({ id, name: id, type: "text" as const })),
        groups: [
          {
            ...autoGroup("ga", firstThenWait, "src", "a", ["src"]),
            outputs: [{ columnId: "a", from: "first" }],
          },
          autoGroup("gb", upper, "a", "b", ["a"]),
        ],
      },
    });
    const t = dataOf(table).id;
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: t } },
      body: { rows: ["x", "y", "z"].map((src) => ({ data: { src } })) },
    });
    const ids = dataOf(ins).rows.map((r) => r.id);
    // Every row is in ga's wait with `a` already written.
    for (const id of ids)
      await waitRow(t, id, (r) => r.cells.ga?.status === "running" && r.data.a !== undefined);
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t } },
      body: {},
    });
    expect(dataOf(stop).cancelled).toBe(3);
    // Once the carriers have let go of the rows, nothing ran after the Stop.
    expect(
      await waitFor(async () => {
        const [busy] = await queryRows<{ n: number }>(
          getDatabase().db,
          sql`select count(*)::int as n from graphile_worker.jobs where key like ${`carrier:${t}:%`}`,
        );
        return busy?.n === 0;
      }, 30_000),
    ).toBe(true);
    for (const id of ids) {
      const r = await row(t, id);
      expect(r.cells.ga?.status).toBe("cancelled");
      expect(r.cells.gb).toBeUndefined();
    }
  });
});
