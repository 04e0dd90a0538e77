import { getDatabase } from "@db/instance";
import type { Schemas } from "@/client/cellflow-client";
import { createWorkspaceWithKey } from "@/services/admin";

/** A fresh workspace with its own key, so tests never share tenants by accident. */
export async function newWorkspace(name = "test"): Promise<{ id: string; key: string }> {
  const created = await createWorkspaceWithKey(getDatabase().db, name);
  if (!created.ok) throw new Error("workspace creation failed");
  return { id: created.value.id, key: created.value.apiKey };
}

export const classifyDefinition: Schemas["WorkflowDefinition"] = {
  inputs: [{ name: "n", type: "number", required: true }],
  blocks: [
    { id: "double", type: "transform", expression: "inputs.n * 2", next: "check" },
    {
      id: "check",
      type: "condition",
      expression: "blocks.double > 10",
      next: { true: "big", false: "small" },
    },
    { id: "big", type: "transform", expression: "'big'", next: "result" },
    { id: "small", type: "transform", expression: "'small'", next: "result" },
    // A join: runs once whichever branch was taken has finished.
    {
      id: "result",
      type: "transform",
      expression: "$exists(blocks.big) ? blocks.big : blocks.small",
    },
  ],
};

/**
 * Upper-cases its text input `v` into block `out`: the auto-run tests' workflow, whose
 * output shows at a glance which row's data it ran on.
 */
export const upperDefinition = {
  inputs: [{ name: "v", type: "text", required: true }],
  blocks: [{ id: "out", type: "transform", expression: "$uppercase(inputs.v)" }],
} satisfies Schemas["WorkflowDefinition"];
