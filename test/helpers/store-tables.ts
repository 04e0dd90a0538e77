/**
 * Tables written straight through the store, for the harnesses that run without the API
 * (bench, chaos): the same shapes the API tests build through `tables.ts`.
 */
import type { Db } from "@db/client";
import { TableSchema } from "@/contracts/table";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";

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
