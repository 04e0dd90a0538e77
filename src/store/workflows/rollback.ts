import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { DeployedVersion } from "./deploy";

/**
 * Deploys a copy of an earlier version as the next version (a rollback); the draft
 * (`workflows.definition`) is left as it is. One statement, numbered like a deploy of the
 * draft: the UPDATE's row lock takes the next number, so rollbacks and deploys racing on
 * one workflow stay distinct and gapless. Versions are never edited, so the copied
 * definition read in the same statement is the one `version` froze. Null when the
 * workflow is not this workspace's or has no such version (nothing is written).
 */
export async function rollbackWorkflow(
  db: Db,
  rollback: { workspaceId: string; workflowId: string; version: number },
): Promise<DeployedVersion | null> {
  const { workspaceId, workflowId, version } = rollback;
  const rows = await queryRows<DeployedVersion>(
    db,
    sql`
      with source as (
        select v.version, v.definition
          from workflow_versions v
          join workflows w on w.id = v.workflow_id
         where v.workflow_id = ${workflowId} and v.version = ${version}
           and w.workspace_id = ${workspaceId}
      ), bumped as (
        update workflows
           set deployed_version = coalesce(deployed_version, 0) + 1
         where id = ${workflowId} and workspace_id = ${workspaceId}
           and exists (select 1 from source)
        returning id, deployed_version
      )
      insert into workflow_versions (workflow_id, version, definition, rolled_back_from)
      select b.id, b.deployed_version, s.definition, s.version from bumped b cross join source s
      returning version, rolled_back_from as "rolledBackFrom"`,
  );
  return rows[0] ?? null;
}
