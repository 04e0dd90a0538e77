/**
 * The workflow editor's "Use in a table…" and "Try it" against the real API: the PATCH
 * body the dialog builds from its defaults (inputs mapped by column id or name, one new
 * output column per terminal block, the table's existing columns and groups kept) is
 * accepted, and the group's cells complete with the workflow's results, whether a run is
 * started or the group was added with auto-run; the test request the panel builds for a
 * row through that group answers what the cell would get; and the API's refusal of a
 * paid workflow is the one the panel answers with its confirmation.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { toApiError } from "@/ui/api";
import { asksAllowPaid, blockRunsOf, buildTestBody } from "@/ui/workflows/try-request";
import { buildUseInTablePatch, defaultForm } from "@/ui/workflows/use-in-table-plan";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { splitNameDefinition as DEFINITION } from "../helpers/definitions";
import { runToEnd, useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 2);
  key = (await newWorkspace()).key;
});

async function setup(): Promise<{ workflowId: string; table: Schemas["TableView"] }> {
  const api = apiClient(key);
  const wf = dataOf(
    await api.POST("/api/workflows", { body: { name: "Shout", definition: DEFINITION } }),
  );
  const created = dataOf(
    await api.POST("/api/tables", {
      body: {
        name: "People",
        columns: [
          { id: "full_name", name: "Name", type: "text" },
          { id: "note", name: "Note", type: "text" },
        ],
        groups: [
          // An existing group, which the PATCH must keep.
          {
            id: "shout",
            name: "Shout",
            kind: "workflow",
            workflowId: wf.id,
            inputs: { name: "full_name" },
            outputs: [{ columnId: "note", from: "upper" }],
          },
        ],
      },
    }),
  );
  const table = dataOf(await api.GET("/api/tables/{id}", { params: { path: { id: created.id } } }));
  return { workflowId: wf.id, table };
}

async function rowsOf(tableId: string) {
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows", { params: { path: { id: tableId } } }),
  ).rows;
}

describe("use in a table", () => {
  it("the dialog's default PATCH is accepted and the new group's cells complete with each terminal block's result after a run", async () => {
    const { workflowId, table } = await setup();
    const form = defaultForm({
      definition: DEFINITION,
      workflowName: "Shout",
      deployed: false,
      table,
    });
    // The input `name` found the column named "Name".
    expect(form.inputs).toEqual({ name: "full_name" });
    const { body, groupId } = buildUseInTablePatch(table, form, {
      id: workflowId,
      definition: DEFINITION,
    });
    expect(groupId).toBe("shout_2");

    const api = apiClient(key);
    const patched = await api.PATCH("/api/tables/{id}", {
      params: { path: { id: table.id } },
      body,
    });
    expect(patched.response.status, JSON.stringify(patched.error)).toBe(200);
    const after = dataOf(patched);
    expect(after.groups.map((g) => g.id)).toEqual(["shout", "shout_2"]);
    expect(after.columns.map((c) => [c.id, c.type])).toEqual([
      ["full_name", "text"],
      ["note", "text"],
      ["upper", "json"],
      ["length", "json"],
    ]);
    expect(after.columns[2]?.name).toBe("Upper");

    await api.POST("/api/tables/{id}/rows", {
      params: { path: { id: table.id } },
      body: { rows: [{ data: { full_name: "ada" } }, { data: { full_name: "grace" } }] },
    });
    expect(await runToEnd(key, table.id)).toBe("completed");
    const rows = await rowsOf(table.id);
    expect(rows.map((r) => [r.data.upper, r.data.length, r.data.note])).toEqual([
      ["ADA", 3, "ADA"],
      ["GRACE", 5, "GRACE"],
    ]);
    for (const r of rows) expect(r.cells[groupId]?.status).toBe("completed");

    // "Try it" on a row through the new group answers what its cell got, writing nothing.
    const row = rows[0];
    if (!row) throw new Error("no row");
    const tryBody = buildTestBody({
      target: { mode: "row", tableId: table.id, groupId, rowId: row.id },
      dirty: false,
      definition: DEFINITION,
      allowPaid: false,
    });
    const tried = await api.POST("/api/workflows/{id}/test", {
      params: { path: { id: workflowId } },
      body: tryBody,
    });
    expect(tried.response.status, JSON.stringify(tried.error)).toBe(200);
    const answered = dataOf(tried);
    expect(answered.status).toBe("completed");
    expect(answered.outputs).toEqual({ upper: "ADA", length: 3 });
    expect(Object.keys(blockRunsOf(answered)).sort()).toEqual(["length", "start", "upper"]);
  });

  it("with auto-run checked, adding the group runs it on the rows where its inputs are filled", async () => {
    const { workflowId, table } = await setup();
    const api = apiClient(key);
    await api.POST("/api/tables/{id}/rows", {
      params: { path: { id: table.id } },
      body: { rows: [{ data: { full_name: "lin" } }, { data: {} }] },
    });
    const form = defaultForm({
      definition: DEFINITION,
      workflowName: "Shout",
      deployed: false,
      table,
    });
    form.autoRun = true;
    form.outputs = form.outputs.filter((o) => o.from === "upper");
    const { body, groupId } = buildUseInTablePatch(table, form, {
      id: workflowId,
      definition: DEFINITION,
    });
    const patched = await api.PATCH("/api/tables/{id}", {
      params: { path: { id: table.id } },
      body,
    });
    expect(patched.response.status, JSON.stringify(patched.error)).toBe(200);
    // No run was asked for: the auto-fire alone fills the cell.
    const filled = await waitFor(
      async () => (await rowsOf(table.id))[0]?.cells[groupId]?.status === "completed",
      30_000,
    );
    expect(filled).toBe(true);
    const rows = await rowsOf(table.id);
    expect(rows.map((r) => [r.data.upper ?? null, r.cells[groupId]?.status ?? null])).toEqual([
      ["LIN", "completed"],
      // The required input's column is empty: the group depends on it and did not run.
      [null, null],
    ]);
  });
});

describe("try it", () => {
  it("a paid workflow's refusal is the one the panel turns into its confirmation", async () => {
    const api = apiClient(key);
    const wf = dataOf(
      await api.POST("/api/workflows", {
        body: {
          name: "Paid",
          definition: {
            inputs: [{ name: "domain", type: "text", required: false }],
            blocks: [
              {
                id: "look",
                type: "enrichment",
                enrichmentId: "company_lookup",
                inputs: { domain: "inputs.domain" },
              },
            ],
          },
        },
      }),
    );
    const body = buildTestBody({
      target: { mode: "inputs", inputs: { domain: "acme.test" } },
      dirty: false,
      definition: null,
      allowPaid: false,
    });
    const r = await api.POST("/api/workflows/{id}/test", { params: { path: { id: wf.id } }, body });
    expect(r.response.status).toBe(400);
    expect(asksAllowPaid(toApiError(r.response.status, r.error))).toBe(true);
  });
});
