/** Tables for engine tests, built through the API like a user would. */
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
 * The create-table body of a table whose one group ("meta") is the paid, rate-limited
 * website_meta enrichment over a `url` column, its title into `title`.
 */
export function websiteMetaTableBody(name: string, group: Record<string, unknown> = {}) {
  return {
    name,
    columns: [
      { id: "url", name: "URL", type: "text" },
      { id: "title", name: "Title", type: "text" },
    ],
    groups: [
      {
        id: "meta",
        name: "Meta",
        kind: "enrichment",
        enrichmentId: "website_meta",
        inputs: { url: "url" },
        outputs: [{ columnId: "title", from: "title" }],
        ...group,
      },
    ],
  };
}
