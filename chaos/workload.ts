/**
 * The chaos workloads' databases and tables. A fresh database per run (or the test's),
 * with the audit trigger installed; a table of rows × 2 chained workflow groups, each an
 * `http` block calling the sink and a transform of its answer: group `a` calls
 * `/a?x=<n>` and writes `a<n>`, group `b` reads that column and calls `/b?x=a<n>`, writing
 * `ba<n>`. The chain makes the second cell depend on the first one's output, and the
 * expected values make a lost or mixed-up write visible.
 */

import { createDatabase, type Database, type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { WorkflowDefinition } from "@/contracts/workflow";
import type { Plan } from "@/domain/statuses";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { migratedDatabase } from "../test/helpers/databases";
import { installAudit } from "./audit";
import type { CellNow } from "./invariants";
import { json, type Sink } from "./sink";

export const GROUPS = ["a", "b"] as const;

/** A fresh, migrated database on the chaos server, with the audit trigger. */
export async function freshDatabase(
  adminUrl: string,
  name: string,
): Promise<{ url: string; database: Database }> {
  const url = await migratedDatabase(adminUrl, name);
  return { url, database: await openDatabase(url) };
}

/** A pool on an already migrated database (the smoke test's), with the audit trigger. */
export async function openDatabase(url: string, poolMax = 10): Promise<Database> {
  const database = createDatabase({ url, poolMax, applicationName: "cellflow-chaos" });
  await installAudit(database.db);
  return database;
}

/** The sink's two paths: each echoes its `x` behind its own letter. */
export function answerChain(sink: Sink): void {
  for (const g of GROUPS) sink.on(`/${g}`, (q) => json({ v: `${g}${q.get("x") ?? ""}` }));
}

const callAndKeep = (sinkUrl: string, path: string): WorkflowDefinition => ({
  inputs: [{ name: "x", type: "json", required: true }],
  blocks: [
    {
      id: "call",
      type: "http",
      method: "GET",
      url: `${sinkUrl}/${path}?x={{ inputs.x }}`,
      next: "keep",
    },
    { id: "keep", type: "transform", expression: "blocks.call.body.v" },
  ],
});

export async function chainTable(
  db: Db,
  sinkUrl: string,
  rows: number,
  plan: Plan = "unlimited",
): Promise<{ tableId: string; workspaceId: string }> {
  const ws = await createWorkspace(db, "chaos", plan);
  const groups = [];
  for (const [i, g] of GROUPS.entries()) {
    const wf = await createWorkflow(db, ws.id, { name: g, definition: callAndKeep(sinkUrl, g) });
    groups.push({
      id: g,
      name: g,
      kind: "workflow" as const,
      workflowId: wf.id,
      version: "live" as const,
      // `b` reads what `a` wrote: the chain.
      inputs: { x: i === 0 ? "n" : `out_${GROUPS[i - 1]}` },
      outputs: [{ columnId: `out_${g}`, from: "keep" }],
      dependsOn: [],
      autoRun: false,
    });
  }
  const table = await createTable(db, ws.id, {
    name: "chaos",
    schema: {
      columns: [
        { id: "n", name: "n", type: "json" as const },
        ...GROUPS.map((g) => ({ id: `out_${g}`, name: `out_${g}`, type: "json" as const })),
      ],
      groups,
    },
  });
  for (let i = 0; i < rows; i += 1000) {
    const page = Array.from({ length: Math.min(1000, rows - i) }, (_, k) => ({ n: i + k }));
    await insertRows(db, table.id, page);
  }
  return { tableId: table.id, workspaceId: ws.id };
}

export interface WrongOutput {
  rowId: string;
  groupId: string;
  executionId: string;
  expected: string;
  actual: unknown;
}

/** Completed cells whose output is not what the chain computes from the row's `n`. */
export async function wrongChainOutputs(db: Db, tableId: string): Promise<WrongOutput[]> {
  return queryRows<WrongOutput>(
    db,
    sql`select c.row_id as "rowId", c.group_id as "groupId", c.execution_id as "executionId",
               (case c.group_id when 'a' then 'a' else 'ba' end) || (r.data->>'n') as expected,
               r.data->('out_' || c.group_id) as actual
          from cells c join rows r on r.id = c.row_id
         where c.table_id = ${tableId} and c.status = 'completed'
           and (r.data->>('out_' || c.group_id)) is distinct from
               (case c.group_id when 'a' then 'a' else 'ba' end) || (r.data->>'n')`,
  );
}

export async function cellsNow(db: Db, tableId: string): Promise<CellNow[]> {
  return queryRows<CellNow>(
    db,
    sql`select row_id as "rowId", group_id as "groupId", status::text as status,
               execution_id as "executionId", error
          from cells where table_id = ${tableId}`,
  );
}
