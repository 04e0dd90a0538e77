/**
 * The demo the embedded default starts with: a workflow and a table whose groups run
 * offline (transform and condition blocks), with auto-run on, so the first thing a new
 * user sees is cells filling. Seeded only into an empty default workspace.
 */
import type { ServiceContext } from "@/services/context";
import { insertRows } from "@/services/rows";
import { createTable } from "@/services/tables";
import { createWorkflow } from "@/services/workflows";
import { workspaceIsEmpty } from "@/store/workspaces/is-empty";

export async function seedDemo(ctx: ServiceContext): Promise<string | null> {
  if (!(await workspaceIsEmpty(ctx.db, ctx.workspaceId))) return null;
  const classify = await createWorkflow(ctx, {
    name: "Size class",
    definition: {
      inputs: [{ name: "employees", type: "number", required: true }],
      blocks: [
        {
          id: "check",
          type: "condition",
          expression: "inputs.employees >= 250",
          next: { true: "large", false: "small" },
        },
        { id: "large", type: "transform", expression: "'enterprise'", next: "result" },
        {
          id: "small",
          type: "transform",
          expression: "inputs.employees >= 50 ? 'mid-market' : 'smb'",
          next: "result",
        },
        {
          id: "result",
          type: "transform",
          expression: "$exists(blocks.large) ? blocks.large : blocks.small",
        },
      ],
    },
  });
  const pitch = await createWorkflow(ctx, {
    name: "One-line pitch",
    definition: {
      inputs: [
        { name: "company", type: "text", required: true },
        { name: "segment", type: "text", required: true },
      ],
      blocks: [
        { id: "slow", type: "wait", ms: 300, next: "line" },
        {
          id: "line",
          type: "transform",
          expression: "inputs.company & ' — ' & inputs.segment & ' account'",
        },
      ],
    },
  });
  if (!classify.ok || !pitch.ok) throw new Error("the demo workflows did not validate");
  const table = await createTable(ctx, {
    name: "Demo: accounts",
    columns: [
      { id: "company", name: "Company", type: "text" },
      { id: "employees", name: "Employees", type: "number" },
      { id: "segment", name: "Segment", type: "text" },
      { id: "pitch", name: "Pitch", type: "text" },
    ],
    groups: [
      {
        id: "segment_g",
        name: "Segment",
        kind: "workflow",
        workflowId: classify.value.id,
        version: "live",
        inputs: { employees: "employees" },
        outputs: [{ columnId: "segment", from: "result" }],
        dependsOn: ["employees"],
        autoRun: true,
      },
      {
        id: "pitch_g",
        name: "Pitch",
        kind: "workflow",
        workflowId: pitch.value.id,
        version: "live",
        inputs: { company: "company", segment: "segment" },
        outputs: [{ columnId: "pitch", from: "line" }],
        dependsOn: ["company", "segment"],
        autoRun: true,
      },
    ],
  });
  if (!table.ok) throw new Error("the demo table did not validate");
  const names = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Soylent",
    "Tyrell",
    "Wonka",
  ];
  await insertRows(ctx, table.value.id, {
    rows: names.map((company, i) => ({
      data: { company, employees: [12, 40, 75, 300, 5000, 180, 900, 30, 260, 55][i] ?? 10 },
    })),
  });
  return table.value.id;
}
