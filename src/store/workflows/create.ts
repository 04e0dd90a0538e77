import type { Db } from "@db/client";
import { workflows } from "@db/schema";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { newId } from "@/domain/ids";
import { type WorkflowRecord, workflowColumns } from "./read";

export async function createWorkflow(
  db: Db,
  workspaceId: string,
  input: { name: string; definition: WorkflowDefinition },
): Promise<WorkflowRecord> {
  const [row] = await db
    .insert(workflows)
    .values({ id: newId("wf"), workspaceId, name: input.name, definition: input.definition })
    .returning(workflowColumns);
  if (!row) throw new Error("workflow insert returned nothing");
  return row;
}
