/**
 * Creating an AI column, step by step: the workflow (created, or brought up to the form
 * when a try already saved it as a draft), then the columns and the group in one
 * `PATCH /api/tables/:id` (both or neither). The API has no way to delete a workflow, so
 * a table step that fails leaves the workflow, and says so: the next Create reuses it
 * instead of making another. The calls are passed in, so the steps are unit-tested.
 */
import type { TableView } from "@/contracts/table";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { type AiColumnPlan, tablePatchBody } from "./ai-column-plan";

export interface AiColumnCalls {
  createWorkflow(body: { name: string; definition: WorkflowDefinition }): Promise<{ id: string }>;
  updateWorkflow(
    id: string,
    body: { name: string; definition: WorkflowDefinition },
  ): Promise<unknown>;
  patchTable(body: ReturnType<typeof tablePatchBody>): Promise<TableView>;
}

export type CreateOutcome =
  | { ok: true; table: TableView; workflowId: string }
  /** `workflowId`: the workflow that exists now (null: none was made). */
  | { ok: false; stage: "workflow" | "table"; workflowId: string | null; error: unknown };

/** The draft a try runs against: the form's workflow, made once per dialog. */
export async function ensureWorkflow(
  calls: Pick<AiColumnCalls, "createWorkflow">,
  plan: AiColumnPlan,
  workflowId: string | null,
): Promise<string> {
  if (workflowId !== null) return workflowId;
  return (await calls.createWorkflow(plan.workflow)).id;
}

export async function createAiColumn(
  calls: AiColumnCalls,
  table: Pick<TableView, "columns" | "groups">,
  plan: AiColumnPlan,
  workflowId: string | null,
): Promise<CreateOutcome> {
  let id = workflowId;
  try {
    if (id === null) id = (await calls.createWorkflow(plan.workflow)).id;
    else await calls.updateWorkflow(id, plan.workflow);
  } catch (error) {
    return { ok: false, stage: "workflow", workflowId: id, error };
  }
  try {
    const updated = await calls.patchTable(tablePatchBody(table, plan, id));
    return { ok: true, table: updated, workflowId: id };
  } catch (error) {
    return { ok: false, stage: "table", workflowId: id, error };
  }
}

/** What a failed create left, for the person: nothing, or the workflow it made. */
export function createFailureText(
  outcome: Extract<CreateOutcome, { ok: false }>,
  workflowName: string,
  reason: string,
): string {
  if (outcome.stage === "workflow")
    return outcome.workflowId === null
      ? `The workflow could not be created, so nothing was added: ${reason}`
      : `The workflow “${workflowName}” could not be updated, so nothing was added to the table: ${reason}`;
  return `The workflow “${workflowName}” was saved, but the columns and group could not be added to the table: ${reason}. Create again to retry; it reuses that workflow.`;
}
