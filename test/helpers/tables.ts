/** Tables for engine tests, built through the API like a user would. */
import { TableSchema } from "@/contracts/table";
import { apiClient, dataOf } from "./api";

/** A workflow that waits `ms` (cancellably) and then outputs "ok". */
export async function waitWorkflow(key: string, ms: number): Promise<string> {
  const res = await apiClient(key).POST("/api/workflows", {
    body: {
      name: `wait ${ms}`,
      definition: {
        blocks: [
          { id: "pause", type: "wait", ms, next: "done" },
          { id: "done", type: "transform", expression: "'ok'" },
        ],
      },
    },
  });
  return dataOf(res).id;
}

/** A table with `groups` text columns, each filled by its own group of the wait workflow. */
export async function waitTable(
  key: string,
  spec: { groups: number; ms: number; rows: number },
): Promise<{ id: string; rowIds: string[] }> {
  const api = apiClient(key);
  const wf = await waitWorkflow(key, spec.ms);
  const t = await api.POST("/api/tables", {
    body: {
      name: "engine",
      columns: Array.from({ length: spec.groups }, (_, i) => ({
        id: `c${i}`,
        name: `C${i}`,
        type: "text" as const,
      })),
      groups: Array.from({ length: spec.groups }, (_, i) => ({
        id: `g${i}`,
        name: `G${i}`,
        kind: "workflow" as const,
        workflowId: wf,
        outputs: [{ columnId: `c${i}`, from: "done" }],
      })),
    },
  });
  const id = dataOf(t).id;
  const rowIds: string[] = [];
  for (let i = 0; i < spec.rows; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, spec.rows - i) }, () => ({ data: {} }));
    const ins = await api.POST("/api/tables/{id}/rows", {
      params: { path: { id } },
      body: { rows: batch },
    });
    rowIds.push(...dataOf(ins).rows.map((r) => r.id));
  }
  return { id, rowIds };
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
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    const ins = await api.POST("/api/tables/{id}/rows", {
      params: { path: { id: table.id } },
      body: { rows: rows.slice(i, i + 1000).map((data) => ({ data })) },
    });
    ids.push(...dataOf(ins).rows.map((r) => r.id));
  }
  return {
    tableId: table.id,
    ids,
    schema: TableSchema.parse({ columns: table.columns, groups: table.groups }),
  };
}
