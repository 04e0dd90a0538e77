import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface DeployedVersion {
  version: number;
  rolledBackFrom: number | null;
}

/**
 * Freezes the current draft as the next version. One statement: the version number is
 * taken by the UPDATE's row lock, so concurrent deploys get distinct, gapless versions.
 */
export async function deployWorkflow(
  db: Db,
  workflow: { workspaceId: string; workflowId: string },
): Promise<DeployedVersion | null> {
  const { workspaceId, workflowId } = workflow;
  const rows = await queryRows<DeployedVersion>(
    db,
    sql`
      with bumped as (
        update workflows
           set deployed_version = coalesce(deployed_version, 0) + 1
         where id = ${workflowId} and workspace_id = ${workspaceId}
        returning id, deployed_version, definition
      )
      insert into workflow_versions (workflow_id, version, definition)
      select id, deployed_version, definition from bumped
      returning version, rolled_back_from as "rolledBackFrom"`,
  );
  return rows[0] ?? null;
}
