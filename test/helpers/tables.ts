/** Tables for engine tests, built through the API like a user would. */

import type { Schemas } from "@/client/cellflow-client";
import { TableSchema } from "@/contracts/table";
import { apiClient, dataOf } from "./api";
import { websiteMetaTableBody } from "./store-tables";

/**
 * A workflow that waits `ms` (cancellably) and then outputs "ok" from block `done`; with
 * `waitOnly`, the wait block `pause` alone, whose result is the output.
 */
export async function waitWorkflow(key: string, ms: number, waitOnly = false): Promise<string> {
  const res = await apiClient(key).POST("/api/workflows", {
    body: {
      name: `wait ${ms}`,
      definition: {
        blocks: waitOnly
          ? [{ id: "pause", type: "wait", ms }]
          : [
              { id: "pause", type: "wait", ms, next: "done" },
              { id: "done", type: "transform", expression: "'ok'" },
            ],
      },
    },
  });
  return dataOf(res).id;
}

/**
 * A table with `groups` columns `c0`…, each filled by its own group `g0`… of the wait
 * workflow, and `rows` empty rows. `waitOnly` drops the block after the wait (the columns
 * then hold the wait's json result), so that a cell's time is the wait's alone.
 */
export async function waitTable(
  key: string,
  spec: { groups: number; ms: number; rows: number; waitOnly?: boolean },
): Promise<{ id: string; rowIds: string[] }> {
  const api = apiClient(key);
  const waitOnly = spec.waitOnly ?? false;
  const wf = await waitWorkflow(key, spec.ms, waitOnly);
  const t = await api.POST("/api/tables", {
    body: {
      name: "engine",
      columns: Array.from({ length: spec.groups }, (_, i) => ({
        id: `c${i}`,
        name: `C${i}`,
        type: waitOnly ? ("json" as const) : ("text" as const),
      })),
      groups: Array.from({ length: spec.groups }, (_, i) => ({
        id: `g${i}`,
        name: `G${i}`,
        kind: "workflow" as const,
        workflowId: wf,
        outputs: [{ columnId: `c${i}`, from: waitOnly ? "pause" : "done" }],
      })),
    },
  });
  const id = dataOf(t).id;
  const rowIds = await addRows(
    key,
    id,
    Array.from({ length: spec.rows }, () => ({})),
  );
  return { id, rowIds };
}

/**
 * A table whose one group `g` runs `workflow` (an id, or the definition of a new one):
 * `outputs` maps each column to the block path filling it, json unless `columns` types
 * it; `columns` come first and also hold the data the group reads. `group` overrides the
 * group's other fields (inputs, version, dependsOn, autoRun…). `rows` are inserted
 * (default: one empty row).
 */
export async function workflowTable(
  key: string,
  spec: {
    workflow: string | Schemas["WorkflowDefinition"];
    outputs: Record<string, string>;
    columns?: Schemas["Column"][];
    group?: Partial<Omit<Schemas["WorkflowGroup"], "kind">>;
    rows?: Record<string, unknown>[];
  },
): Promise<{ tableId: string; workflowId: string; rowIds: string[] }> {
  const workflowId =
    typeof spec.workflow === "string"
      ? spec.workflow
      : dataOf(
          await apiClient(key).POST("/api/workflows", {
            body: { name: "one group", definition: spec.workflow },
          }),
        ).id;
  const columns = spec.columns ?? [];
  const typed = new Set(columns.map((c) => c.id));
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "one group",
      columns: [
        ...columns,
        ...Object.keys(spec.outputs)
          .filter((id) => !typed.has(id))
          .map((id) => ({ id, name: id, type: "json" as const })),
      ],
      groups: [
        {
          id: "g",
          name: "G",
          kind: "workflow" as const,
          workflowId,
          outputs: Object.entries(spec.outputs).map(([columnId, from]) => ({ columnId, from })),
          ...spec.group,
        },
      ],
    },
  });
  const tableId = dataOf(t).id;
  const rowIds = await addRows(key, tableId, spec.rows ?? [{}]);
  return { tableId, workflowId, rowIds };
}

/**
 * A table of manual groups `groups` (ids), each filling its json column `c_<id>` with
 * 'ok' by one transform, after `columns` (the data, typed); `rows` inserted (each a row's
 * data).
 */
export async function transformTable(
  key: string,
  spec: { groups: string[]; columns?: Schemas["Column"][]; rows: Record<string, unknown>[] },
): Promise<{ tableId: string; rowIds: string[] }> {
  const wf = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: {
        name: "w",
        definition: { inputs: [], blocks: [{ id: "out", type: "transform", expression: "'ok'" }] },
      },
    }),
  ).id;
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "transform groups",
      columns: [
        ...(spec.columns ?? []),
        ...spec.groups.map((g) => ({ id: `c_${g}`, name: g, type: "json" as const })),
      ],
      groups: spec.groups.map((g) => ({
        id: g,
        name: g,
        kind: "workflow" as const,
        workflowId: wf,
        inputs: {} as Record<string, string>,
        outputs: [{ columnId: `c_${g}`, from: "out" }],
        autoRun: false,
        dependsOn: [],
      })),
    },
  });
  const tableId = dataOf(t).id;
  return { tableId, rowIds: await addRows(key, tableId, spec.rows) };
}

/** Inserts `rows` (each a row's data) a page of 1,000 at a time; their ids, in order. */
async function addRows(
  key: string,
  tableId: string,
  rows: Record<string, unknown>[],
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: rows.slice(i, i + 1000).map((data) => ({ data })) },
    });
    ids.push(...dataOf(ins).rows.map((r) => r.id));
  }
  return ids;
}

/**
 * A website_meta table (`websiteMetaTableBody`, its `group` fields overridden) with `rows`
 * rows whose URLs are `${siteUrl}${path}?i=N`: each its own, so no cell is a cache hit and
 * every one is a paid, rate-limited provider call (unless `distinct` repeats them).
 */
export async function metaTable(
  key: string,
  spec: {
    siteUrl: string;
    rows: number;
    path?: string;
    name?: string;
    group?: Partial<Omit<Schemas["EnrichmentGroup"], "kind">>;
    /** Only this many distinct pages, repeated in order (row i reads page i mod n). */
    distinct?: number;
  },
): Promise<string> {
  const path = spec.path ?? "/site";
  const t = await apiClient(key).POST("/api/tables", {
    body: websiteMetaTableBody(spec.name ?? "sites", spec.group),
  });
  const tableId = dataOf(t).id;
  await addRows(
    key,
    tableId,
    Array.from({ length: spec.rows }, (_, i) => ({
      url: `${spec.siteUrl}${path}?i=${spec.distinct ? i % spec.distinct : i}`,
    })),
  );
  return tableId;
}

/**
 * A table with a column of every type (for row filters and orders) and two groups of a
 * one-block workflow: `g` writes `out`, `h` writes `out2`. Rows are inserted in order;
 * `ids` follow it. `schema` is the table's schema as stored.
 */
export async function typedTable(
  key: string,
  name: string,
  rows: Record<string, unknown>[],
): Promise<{ tableId: string; ids: string[]; schema: TableSchema }> {
  const api = apiClient(key);
  const wf = await api.POST("/api/workflows", {
    body: { name, definition: { blocks: [{ id: "o", type: "transform", expression: "'v'" }] } },
  });
  const workflowId = dataOf(wf).id;
  const group = (id: string, columnId: string) => ({
    id,
    name: id,
    kind: "workflow" as const,
    workflowId,
    outputs: [{ columnId, from: "o" }],
  });
  const t = await api.POST("/api/tables", {
    body: {
      name,
      columns: [
        { id: "name", name: "Name", type: "text" },
        { id: "n", name: "N", type: "number" },
        { id: "ok", name: "OK", type: "boolean" },
        { id: "day", name: "Day", type: "date" },
        { id: "tags", name: "Tags", type: "json" },
        { id: "tier", name: "Tier", type: "select", options: ["free", "pro"] },
        { id: "out", name: "Out", type: "text" },
        { id: "out2", name: "Out 2", type: "text" },
      ],
      groups: [group("g", "out"), group("h", "out2")],
    },
  });
  const table = dataOf(t);
  const ids = await addRows(key, table.id, rows);
  return {
    tableId: table.id,
    ids,
    schema: TableSchema.parse({ columns: table.columns, groups: table.groups }),
  };
}
