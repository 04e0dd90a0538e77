import type { Db } from "@db/client";
import { workflows } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { type WorkflowRecord, workflowColumns } from "./read";

/** Edits the draft; null when the workflow is not this workspace's. */
export async function updateWorkflow(
  db: Db,
  update: {
    workspaceId: string;
    workflowId: string;
    patch: { name?: string; definition?: WorkflowDefinition };
  },
): Promise<WorkflowRecord | null> {
  const { workspaceId, workflowId, patch } = update;
  const [row] = await db
    .update(workflows)
    .set({
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.definition !== undefined ? { definition: patch.definition } : {}),
      updatedAt: sql`now()`,
    })
    .where(and(eq(workflows.id, workflowId), eq(workflows.workspaceId, workspaceId)))
    .returning(workflowColumns);
  return row ?? null;
}
