/**
 * The chaos workloads' databases and tables. A fresh database per run (or the test's),
 * with the audit trigger installed; a table of rows × 4 groups. Two chained workflow
 * groups, each an `http` block calling the sink and a transform of its answer: group `a`
 * calls `/a?x=<n>` and writes `a<n>`, group `b` reads that column and calls `/b?x=a<n>`,
 * writing `ba<n>`. The chain makes the second cell depend on the first one's output, and
 * the expected values make a lost or mixed-up write visible. Two paid groups calling the
 * billing provider (`provider.ts`): `co`, a `company_lookup` enrichment group on the
 * row's `co_domain` (charged by the cell's terminal write), whose domains repeat for one
 * row in ten (`co<n-5>.example`: cache hits, never charged); and `cw`, a workflow whose
 * `lookup` block is that enrichment on `cw_domain`, distinct per row (charged by the
 * block's checkpoint).
 */

import { createDatabase, type Database, type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Group } from "@/contracts/table";
import type { WorkflowDefinition } from "@/contracts/workflow";
import type { Plan } from "@/domain/statuses";
import { decodeSecretKey, generateSecretKey, sealSecret } from "@/security/secret-box";
import { insertRows } from "@/store/rows/insert";
import { putSecret } from "@/store/secrets/put";
import { createTable } from "@/store/tables/create";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { migratedDatabase } from "../test/helpers/databases";
import { installAudit } from "./audit";
import type { CellNow } from "./invariants";
import type { PaidColumn } from "./ledger-read";
import { answerCompanies, COMPANY_MILLI, COMPANY_PATH, companyKind, companyName } from "./provider";
import { json, type Sink } from "./sink";

/** The chained groups (each calls the sink once) and the paid ones, in the table's order. */
export const CHAIN_GROUPS = ["a", "b"] as const;
export const PAID: readonly PaidColumn[] = [
  { groupId: "co", source: "company_lookup", milli: COMPANY_MILLI, inputColumn: "co_domain" },
  {
    groupId: "cw",
    source: "company_lookup@lookup",
    milli: COMPANY_MILLI,
    blockId: "lookup",
    inputColumn: "cw_domain",
  },
];
export const GROUPS = [...CHAIN_GROUPS, ...PAID.map((p) => p.groupId)];

/** Row `n`'s domains: `co` repeats row n-5's for one row in ten, `cw` is its own. */
export const coDomain = (n: number) => `co${n % 10 === 9 ? n - 5 : n}.example`;
export const cwDomain = (n: number) => `cw${n}.example`;

/**
 * The key the workspace secrets are sealed with: CELLFLOW_SECRET_KEY, or one made for this
 * process (the workers it spawns inherit its environment).
 */
function secretKey(): Buffer {
  process.env.CELLFLOW_SECRET_KEY ||= generateSecretKey();
  const key = decodeSecretKey(process.env.CELLFLOW_SECRET_KEY);
  if (!key) throw new Error("CELLFLOW_SECRET_KEY is not a 32-byte key");
  return key;
}

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

/**
 * The sink's paths: the chain's two, each echoing its `x` behind its own letter, and the
 * billing provider's, answering after `providerMs`.
 */
export function answerChain(sink: Sink, providerMs: number): void {
  for (const g of CHAIN_GROUPS) sink.on(`/${g}`, (q) => json({ v: `${g}${q.get("x") ?? ""}` }));
  answerCompanies(sink, providerMs);
}

const lookup: WorkflowDefinition = {
  inputs: [{ name: "d", type: "json", required: true }],
  blocks: [
    {
      id: "lookup",
      type: "enrichment",
      enrichmentId: "company_lookup",
      inputs: { domain: "inputs.d" },
    },
  ],
};

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
  await putSecret(db, {
    workspaceId: ws.id,
    name: "COMPANY_LOOKUP_URL_1",
    ciphertext: sealSecret(secretKey(), `${sinkUrl}${COMPANY_PATH}`),
  });
  const groups: Group[] = [];
  for (const [i, g] of CHAIN_GROUPS.entries()) {
    const wf = await createWorkflow(db, ws.id, { name: g, definition: callAndKeep(sinkUrl, g) });
    groups.push({
      id: g,
      name: g,
      kind: "workflow",
      workflowId: wf.id,
      version: "live",
      // `b` reads what `a` wrote: the chain.
      inputs: { x: i === 0 ? "n" : `out_${CHAIN_GROUPS[i - 1]}` },
      outputs: [{ columnId: `out_${g}`, from: "keep" }],
      dependsOn: [],
      autoRun: false,
    });
  }
  groups.push({
    id: "co",
    name: "co",
    kind: "enrichment",
    enrichmentId: "company_lookup",
    inputs: { domain: "co_domain" },
    outputs: [{ columnId: "co_name", from: "name" }],
    dependsOn: [],
    autoRun: false,
  });
  const wf = await createWorkflow(db, ws.id, { name: "cw", definition: lookup });
  groups.push({
    id: "cw",
    name: "cw",
    kind: "workflow",
    workflowId: wf.id,
    version: "live",
    inputs: { d: "cw_domain" },
    outputs: [{ columnId: "cw_name", from: "lookup.name" }],
    dependsOn: [],
    autoRun: false,
  });
  const columns = ["n", "co_domain", "cw_domain", "out_a", "out_b", "co_name", "cw_name"];
  const table = await createTable(db, ws.id, {
    name: "chaos",
    schema: {
      columns: columns.map((id) => ({ id, name: id, type: "json" as const })),
      groups,
    },
  });
  for (let i = 0; i < rows; i += 1000) {
    const page = Array.from({ length: Math.min(1000, rows - i) }, (_, k) => ({
      n: i + k,
      co_domain: coDomain(i + k),
      cw_domain: cwDomain(i + k),
    }));
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
         where c.table_id = ${tableId} and c.status = 'completed' and c.group_id in ('a', 'b')
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

/** Completed paid cells whose output column is not what the provider answers for their domain. */
export async function wrongPaidOutputs(db: Db, tableId: string): Promise<WrongOutput[]> {
  const rows = await queryRows<WrongOutput & { domain: string | null }>(
    db,
    sql`select c.row_id as "rowId", c.group_id as "groupId", c.execution_id as "executionId",
               r.data->>(c.group_id || '_domain') as domain, r.data->(c.group_id || '_name') as actual
          from cells c join rows r on r.id = c.row_id
         where c.table_id = ${tableId} and c.status = 'completed' and c.group_id in ('co', 'cw')`,
  );
  const out: WrongOutput[] = [];
  for (const { domain, ...r } of rows) {
    const expected = domain && companyKind(domain) === "found" ? companyName(domain) : null;
    if ((r.actual ?? null) !== expected) out.push({ ...r, expected: String(expected) });
  }
  return out;
}
