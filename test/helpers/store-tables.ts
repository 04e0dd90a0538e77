/**
 * Tables written straight through the store, for the harnesses and tests that run without
 * the API (bench, chaos, store-level tests), and the create-table bodies of the
 * one-enrichment-group shapes, which the API tests post (directly or through `tables.ts`):
 * one definition of each shape for both.
 */
import type { Db } from "@db/client";
import type { Schemas } from "@/client/cellflow-client";
import { TableSchema } from "@/contracts/table";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";

/** A create-table body with its columns and groups spelled out. */
type TableBody = Required<Schemas["CreateTableRequest"]>;

/** A table whose one group is website_meta over `n` pages of the loopback site (`/site?i=`). */
export async function sitesTable(
  db: Db,
  workspaceId: string,
  n: number,
  siteUrl: string,
  name = "w5",
): Promise<string> {
  const { columns, groups } = websiteMetaTableBody(name, { dependsOn: [], autoRun: false });
  const table = await createTable(db, workspaceId, {
    name,
    schema: TableSchema.parse({ columns, groups }),
  });
  for (let i = 0; i < n; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
      url: `${siteUrl}/site?i=${i + k}`,
    }));
    await insertRows(db, table.id, rows);
  }
  return table.id;
}

/**
 * The create-table body of a table whose one group `g` is the enrichment `enrichmentId`:
 * `inputs` maps its inputs to columns, `outputs` each column to the output it takes, and
 * `group` overrides the group's fields. The columns are those named, json, so that any
 * value an enrichment gives fits.
 */
export function enrichmentTableBody(
  name: string,
  s: {
    enrichmentId: string;
    inputs: Record<string, string>;
    outputs: Record<string, string>;
    group?: Partial<Omit<Schemas["EnrichmentGroup"], "kind">>;
  },
): TableBody {
  const columns = [...new Set([...Object.values(s.inputs), ...Object.keys(s.outputs)])];
  return {
    name,
    columns: columns.map((id) => ({ id, name: id, type: "json" as const })),
    groups: [
      {
        id: "g",
        name: "G",
        kind: "enrichment" as const,
        enrichmentId: s.enrichmentId,
        inputs: s.inputs,
        outputs: Object.entries(s.outputs).map(([columnId, from]) => ({ columnId, from })),
        ...s.group,
      },
    ],
  };
}

/**
 * The create-table body of a table whose one group ("meta") is the paid, rate-limited
 * website_meta enrichment over a `url` column, its title into `title`. Its columns are
 * text with names a person reads: the UI tests show them.
 */
export function websiteMetaTableBody(
  name: string,
  group: Partial<Omit<Schemas["EnrichmentGroup"], "kind">> = {},
): TableBody {
  const body = enrichmentTableBody(name, {
    enrichmentId: "website_meta",
    inputs: { url: "url" },
    outputs: { title: "title" },
    group: { id: "meta", name: "Meta", ...group },
  });
  return {
    ...body,
    columns: [
      { id: "url", name: "URL", type: "text" },
      { id: "title", name: "Title", type: "text" },
    ],
  };
}
