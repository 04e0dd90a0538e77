/** Workflow definitions shared by tests that run in different lanes (no imports with effects). */
import type { Schemas } from "@/client/cellflow-client";

/** Upper-cases `name` and counts its letters, on two branches that both end. */
export const splitNameDefinition = {
  inputs: [{ name: "name", type: "text", required: true }],
  blocks: [
    { id: "start", type: "transform", expression: "inputs.name", next: ["upper", "length"] },
    { id: "upper", type: "transform", expression: "$uppercase(blocks.start)", name: "Upper" },
    { id: "length", type: "transform", expression: "$length(blocks.start)" },
  ],
} satisfies Schemas["WorkflowDefinition"];
