/**
 * Tables written straight through the store, for the harnesses that run without the API
 * (bench, chaos): the same shapes the API tests build through `tables.ts`.
 */
import type { Db } from "@db/client";
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
  const table = await createTable(db, workspaceId, {
    name,
    schema: {
      columns: [
        { id: "url", name: "url", type: "text" },
        { id: "title", name: "title", type: "text" },
      ],
      groups: [
        {
          id: "meta",
          name: "meta",
          kind: "enrichment",
          enrichmentId: "website_meta",
          inputs: { url: "url" },
          outputs: [{ columnId: "title", from: "title" }],
          dependsOn: [],
          autoRun: false,
        },
      ],
    },
  });
  for (let i = 0; i < n; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
      url: `${siteUrl}/site?i=${i + k}`,
    }));
    await insertRows(db, table.id, rows);
  }
  return table.id;
}
