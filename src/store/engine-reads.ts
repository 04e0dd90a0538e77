/** Reads the engine makes by id alone: it acts for whoever owns the table. */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { LostReason, Plan } from "@/domain/statuses";
import { asCredits, usedThisMonthMilli } from "./usage/amounts";

/**
 * Credits of the workspace (alias w) spoken for this UTC month: charged this month plus
 * reserved for calls in flight. What the month's cap is checked against.
 */
export const creditsCommitted = asCredits(sql`${usedThisMonthMilli} + w.reserved_milli`);

export interface EngineTable {
  id: string;
  workspaceId: string;
  plan: Plan;
  /** Charged this month plus reserved (see `creditsCommitted`). */
  creditsCommitted: number;
  schema: unknown;
  schemaVersion: number;
  /** The table's default per-row budget in credits (null: none). */
  maxCreditsPerRow: number | null;
}

export async function tableForEngine(db: Db, tableId: string): Promise<EngineTable | null> {
  const rows = await queryRows<EngineTable>(
    db,
    sql`select t.id, t.workspace_id as "workspaceId", w.plan, ${creditsCommitted} as "creditsCommitted",
               t.schema, t.schema_version as "schemaVersion",
               ${asCredits(sql`t.max_credits_per_row_milli`)} as "maxCreditsPerRow"
          from tables t join workspaces w on w.id = t.workspace_id where t.id = ${tableId}`,
  );
  return rows[0] ?? null;
}

/**
 * What a Stop's hold on auto-run is judged on: the table's schema, and the groups of the
 * run it names (null without one). null when the table is gone.
 */
export async function stopHoldSource(
  db: Db,
  tableId: string,
  dispatchId: string | undefined,
): Promise<{ schema: unknown; schemaVersion: number; runGroups: string[] | null } | null> {
  const rows = await queryRows<{
    schema: unknown;
    schemaVersion: number;
    runGroups: string[] | null;
  }>(
    db,
    sql`select t.schema, t.schema_version as "schemaVersion",
               (select d.group_ids from dispatches d where d.id = ${dispatchId ?? null}) as "runGroups"
          from tables t where t.id = ${tableId}`,
  );
  return rows[0] ?? null;
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

/**
 * A sub-workflow's definition, only from the same workspace: the deployed version when
 * the group runs deployed versions (none deployed: null), else the draft.
 */
export async function childWorkflow(
  db: Db,
  workspaceId: string,
  workflowId: string,
  version: "live" | "deployed",
): Promise<unknown | null> {
  const rows =
    version === "live"
      ? await queryRows<{ definition: unknown }>(
          db,
          sql`select definition from workflows where id = ${workflowId} and workspace_id = ${workspaceId}`,
        )
      : await queryRows<{ definition: unknown }>(
          db,
          sql`select v.definition from workflows w
                join workflow_versions v on v.workflow_id = w.id and v.version = w.deployed_version
               where w.id = ${workflowId} and w.workspace_id = ${workspaceId}`,
        );
  return rows[0]?.definition ?? null;
}

/**
 * Whether an attempt was stopped or superseded: its cell no longer runs this execution
 * (a Stop's tombstone, a re-run, the row deleted). For waits whose process may not hear
 * the Stop's notice.
 */
export async function attemptSuperseded(
  db: Db,
  cell: { rowId: string; groupId: string; executionId: string; attempt: number },
): Promise<boolean> {
  return (await attemptLost(db, cell)) !== null;
}

/**
 * Why an attempt no longer holds its cell, or null while it does: `cancelled` (a Stop's
 * tombstone of its execution), `stale` (a re-run, or a later attempt), `gone` (the row or
 * group deleted). The reason the attempt's fenced writes would be refused with.
 */
export async function attemptLost(
  db: Db,
  cell: { rowId: string; groupId: string; executionId: string; attempt: number },
): Promise<LostReason | null> {
  const rows = await queryRows<{ lost: LostReason | null }>(
    db,
    sql`select case when c.row_id is null then 'gone'
                    when c.execution_id <> ${cell.executionId} then 'stale'
                    when c.status = 'cancelled' then 'cancelled'
                    when c.status = 'running' and c.attempt = ${cell.attempt} then null
                    else 'stale' end as lost
          from (select 1) one
          left join cells c on c.row_id = ${cell.rowId} and c.group_id = ${cell.groupId}`,
  );
  return rows[0]?.lost ?? null;
}

/** What a carrier decides a cascade step on (read by `cells/row-step.ts`). */
export interface CascadeStep {
  workspaceId: string;
  /** Charged this month plus reserved (see `creditsCommitted`). */
  creditsCommitted: number;
  /** null when the step's caller said it holds this version's schema (`knownSchemaVersion`). */
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
