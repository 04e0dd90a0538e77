import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface VersionRecord {
  version: number;
  deployedAt: Date;
  rolledBackFrom: number | null;
}

/**
 * A workflow's deployed versions, newest first; null when the workflow is not this
 * workspace's (a workflow never deployed has an empty list).
 */
export async function listWorkflowVersions(
  db: Db,
  workspaceId: string,
  workflowId: string,
): Promise<VersionRecord[] | null> {
  const rows = await queryRows<{
    version: number | null;
    deployedAt: Date | string | null;
    rolledBackFrom: number | null;
  }>(
    db,
    sql`select v.version, v.created_at as "deployedAt", v.rolled_back_from as "rolledBackFrom"
          from workflows w
          left join workflow_versions v on v.workflow_id = w.id
         where w.id = ${workflowId} and w.workspace_id = ${workspaceId}
         order by v.version desc nulls last`,
  );
  if (rows.length === 0) return null;
  return rows.flatMap((r) =>
    r.version === null || r.deployedAt === null
      ? []
      : [
          {
            version: r.version,
            deployedAt: new Date(r.deployedAt),
            rolledBackFrom: r.rolledBackFrom,
          },
        ],
  );
}

/** One deployed version with its definition; null: no such version of this workspace's workflow. */
export async function readWorkflowVersion(
  db: Db,
  workspaceId: string,
  workflowId: string,
  version: number,
): Promise<(VersionRecord & { definition: unknown }) | null> {
  const rows = await queryRows<{
    version: number;
    deployedAt: Date | string;
    rolledBackFrom: number | null;
    definition: unknown;
  }>(
    db,
    sql`select v.version, v.created_at as "deployedAt", v.rolled_back_from as "rolledBackFrom",
               v.definition
          from workflow_versions v
          join workflows w on w.id = v.workflow_id
         where v.workflow_id = ${workflowId} and v.version = ${version}
           and w.workspace_id = ${workspaceId}`,
  );
  const row = rows[0];
  return row ? { ...row, deployedAt: new Date(row.deployedAt) } : null;
}
