/** Reads the engine makes by id alone: it acts for whoever owns the table. */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { queryRows } from "../../db/client";
import type { Plan } from "../domain/statuses";

export interface EngineTable {
  id: string;
  workspaceId: string;
  plan: Plan;
  schema: unknown;
  schemaVersion: number;
}

export async function tableForEngine(db: Db, tableId: string): Promise<EngineTable | null> {
  const rows = await queryRows<EngineTable>(
    db,
    sql`select t.id, t.workspace_id as "workspaceId", w.plan, t.schema, t.schema_version as "schemaVersion"
          from tables t join workspaces w on w.id = t.workspace_id where t.id = ${tableId}`,
  );
  return rows[0] ?? null;
}

export async function rowData(
  db: Db,
  tableId: string,
  rowId: string,
): Promise<Record<string, unknown> | null> {
  const rows = await queryRows<{ data: Record<string, unknown> }>(
    db,
    sql`select data from rows where id = ${rowId} and table_id = ${tableId}`,
  );
  return rows[0]?.data ?? null;
}

/** The draft (`live`) or the latest deployed version of a workflow; null when there is none. */
export async function workflowDefinition(
  db: Db,
  workflowId: string,
  version: "live" | "deployed",
): Promise<{ definition: unknown; version: number | null } | null> {
  const rows =
    version === "live"
      ? await queryRows<{ definition: unknown; version: number | null }>(
          db,
          sql`select definition, null::int as version from workflows where id = ${workflowId}`,
        )
      : await queryRows<{ definition: unknown; version: number | null }>(
          db,
          sql`select v.definition, v.version from workflows w
                join workflow_versions v on v.workflow_id = w.id and v.version = w.deployed_version
               where w.id = ${workflowId}`,
        );
  return rows[0] ?? null;
}

export interface CascadeStep {
  schema: unknown;
  schemaVersion: number;
  /** Per workflow the table's groups name: when its draft changed and its deployed version. */
  workflows: Record<string, { updatedAt: string; deployed: number | null }>;
  plan: Plan;
  /** null when the row is gone. */
  data: Record<string, unknown> | null;
  queued: { groupId: string; executionId: string; dispatchId: string | null }[];
  /** Groups that have a cell on this row, in any status. */
  present: string[];
}

/** Everything one cascade step needs, in one round trip; null when the table is gone. */
export async function cascadeStep(
  db: Db,
  tableId: string,
  rowId: string,
): Promise<CascadeStep | null> {
  const rows = await queryRows<CascadeStep>(
    db,
    sql`select t.schema, t.schema_version as "schemaVersion", w.plan, r.data,
               coalesce((select jsonb_object_agg(wf.id, jsonb_build_object(
                          'updatedAt', extract(epoch from wf.updated_at)::text, 'deployed', wf.deployed_version))
                           from workflows wf
                          where wf.id in (select g->>'workflowId' from jsonb_array_elements(t.schema->'groups') g)),
                        '{}'::jsonb) as workflows,
               coalesce((select jsonb_agg(jsonb_build_object('groupId', c.group_id, 'executionId', c.execution_id,
                                                             'dispatchId', c.dispatch_id) order by c.queued_at, c.group_id)
                           from cells c where c.row_id = ${rowId} and c.status = 'queued'), '[]'::jsonb) as queued,
               coalesce((select array_agg(c.group_id) from cells c where c.row_id = ${rowId}), '{}') as present
          from tables t
          join workspaces w on w.id = t.workspace_id
          left join rows r on r.id = ${rowId} and r.table_id = t.id
         where t.id = ${tableId}`,
  );
  return rows[0] ?? null;
}
