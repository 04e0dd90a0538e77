import type { Db } from "@db/client";
import { workflows, workflowVersions } from "@db/schema";
import { and, eq, inArray } from "drizzle-orm";

export const workflowColumns = {
  id: workflows.id,
  name: workflows.name,
  definition: workflows.definition,
  deployedVersion: workflows.deployedVersion,
  createdAt: workflows.createdAt,
  updatedAt: workflows.updatedAt,
};

export interface WorkflowRecord {
  id: string;
  name: string;
  definition: unknown;
  deployedVersion: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function getWorkflow(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<WorkflowRecord | null> {
  const [row] = await db
    .select(workflowColumns)
    .from(workflows)
    .where(and(eq(workflows.id, id), eq(workflows.workspaceId, workspaceId)))
    .limit(1);
  return row ?? null;
}

export async function listWorkflows(db: Db, workspaceId: string): Promise<WorkflowRecord[]> {
  return db
    .select(workflowColumns)
    .from(workflows)
    .where(eq(workflows.workspaceId, workspaceId))
    .orderBy(workflows.createdAt);
}

/** Which of `ids` are workflows of this workspace. */
export async function existingWorkflowIds(
  db: Db,
  workspaceId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(eq(workflows.workspaceId, workspaceId), inArray(workflows.id, ids)));
  return new Set(rows.map((r) => r.id));
}

/** A deployed version's definition (null: no such version of a workflow of this workspace). */
export async function getWorkflowVersion(
  db: Db,
  workspaceId: string,
  id: string,
  version: number,
): Promise<{ definition: unknown } | null> {
  const [row] = await db
    .select({ definition: workflowVersions.definition })
    .from(workflowVersions)
    .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId))
    .where(
      and(
        eq(workflowVersions.workflowId, id),
        eq(workflowVersions.version, version),
        eq(workflows.workspaceId, workspaceId),
      ),
    )
    .limit(1);
  return row ?? null;
}
