/**
 * What a test run of a workflow runs (`POST /api/workflows/:id/test`), as a cell of its
 * group would see it: the definition (the body's unsaved one, a deployed version, or the
 * draft; with a group and no version, the group's choice), its sub-workflows from the same
 * workspace at the matching version, the inputs (the row's values through the group's
 * input mapping, the body's `inputs` over them) and the row by column names. Refuses
 * (4xx) what a caller must fix; reads only.
 */

import { llmPriceOf } from "@/config/llm-prices";
import type { Issue } from "@/contracts/common";
import { type Group, TableSchema, type WorkflowGroup } from "@/contracts/table";
import { type Block, WorkflowDefinition } from "@/contracts/workflow";
import type { TestWorkflowRequest } from "@/contracts/workflow-test";
import { type Failure, invalid, notFound } from "@/domain/errors";
import { llmCostMilli } from "@/domain/llm-pricing";
import type { Result } from "@/domain/result";
import type { Plan } from "@/domain/statuses";
import { groupInputs } from "@/domain/table-schema";
import { checkWorkflowDefinition } from "@/domain/workflow-graph";
import { getEnrichment } from "@/enrichments/registry";
import { MAX_DEPTH } from "@/execution/blocks/compose";
import { childWorkflow, tableForEngine } from "@/store/engine-reads";
import { getRow } from "@/store/rows/read";
import { getWorkflow, getWorkflowVersion } from "@/store/workflows/read";
import { getWorkspacePlan } from "@/store/workspaces/read";
import type { ServiceContext } from "./context";

export interface TestSetup {
  definition: WorkflowDefinition;
  /** Where sub-workflows come from (cached for the scan and the run). */
  loadChild(workflowId: string): Promise<WorkflowDefinition | null>;
  workflowId: string;
  group: WorkflowGroup | null;
  inputs: Record<string, unknown>;
  row: Record<string, unknown>;
  plan: Plan;
}

const refuse = (path: string, message: string): { ok: false; reason: Failure } => ({
  ok: false,
  reason: invalid([{ path, message }], message),
});

/** The combinations of fields that mean nothing, before anything is read. */
function shapeIssue(req: TestWorkflowRequest): { ok: false; reason: Failure } | null {
  if (req.definition && req.version !== undefined)
    return refuse("version", "give either a definition or a version, not both");
  if (req.rowId !== undefined && req.tableId === undefined)
    return refuse("tableId", "rowId needs the tableId of its table");
  if (req.tableId !== undefined && req.rowId === undefined)
    return refuse("rowId", "tableId needs the rowId of the row to run on");
  if (req.groupId !== undefined && req.tableId === undefined)
    return refuse("tableId", "groupId needs the tableId and rowId of a row of its table");
  return null;
}

type Version = "live" | "deployed" | number;

async function definitionOf(
  ctx: ServiceContext,
  workflowId: string,
  version: Version,
  draft: unknown,
): Promise<Result<WorkflowDefinition, Failure>> {
  if (version === "live") return { ok: true, value: WorkflowDefinition.parse(draft) };
  if (version === "deployed")
    return refuse(
      "version",
      'the group runs the deployed version and the workflow has none: deploy it, or pass version "live"',
    );
  const found = await getWorkflowVersion(ctx.db, ctx.workspaceId, workflowId, version);
  if (!found) return { ok: false, reason: notFound("workflow version") };
  return { ok: true, value: WorkflowDefinition.parse(found.definition) };
}

/** The row's values as the group's inputs and as `row` (by column name), and the group. */
async function rowContext(
  ctx: ServiceContext,
  workflowId: string,
  req: TestWorkflowRequest,
): Promise<
  Result<
    { group: WorkflowGroup | null; mapped: Record<string, unknown>; row: Record<string, unknown> },
    Failure
  >
> {
  if (req.tableId === undefined || req.rowId === undefined)
    return { ok: true, value: { group: null, mapped: {}, row: {} } };
  const table = await tableForEngine(ctx.db, req.tableId);
  if (!table || table.workspaceId !== ctx.workspaceId)
    return { ok: false, reason: notFound("table") };
  const schema = TableSchema.parse(table.schema);
  let group: WorkflowGroup | null = null;
  if (req.groupId !== undefined) {
    const found: Group | undefined = schema.groups.find((g) => g.id === req.groupId);
    if (!found) return { ok: false, reason: notFound("group") };
    if (found.kind !== "workflow" || found.workflowId !== workflowId)
      return refuse("groupId", `group "${found.id}" is not a workflow group of this workflow`);
    group = found;
  }
  const record = await getRow(ctx.db, req.tableId, req.rowId);
  if (!record) return { ok: false, reason: notFound("row") };
  const data = record.data as Record<string, unknown>;
  // Own properties only (never `row[name] = …`): a name such as `__proto__` must stay a key.
  const row = Object.fromEntries(schema.columns.map((c) => [c.name, data[c.id] ?? null]));
  return { ok: true, value: { group, mapped: group ? groupInputs(group, data) : {}, row } };
}

export async function testSetup(
  ctx: ServiceContext,
  workflowId: string,
  req: TestWorkflowRequest,
): Promise<Result<TestSetup, Failure>> {
  const shape = shapeIssue(req);
  if (shape) return shape;
  const workflow = await getWorkflow(ctx.db, ctx.workspaceId, workflowId);
  if (!workflow) return { ok: false, reason: notFound("workflow") };
  const at = await rowContext(ctx, workflowId, req);
  if (!at.ok) return at;
  const { group, mapped, row } = at.value;
  let definition: WorkflowDefinition;
  let childMode: "live" | "deployed" = "live";
  if (req.definition) {
    const issues: Issue[] = checkWorkflowDefinition(req.definition).map((i) => ({
      ...i,
      path: `definition.${i.path}`,
    }));
    if (issues.length > 0)
      return { ok: false, reason: invalid(issues, "The workflow definition is not valid") };
    definition = req.definition;
  } else {
    const wanted: Version =
      req.version ??
      (group?.version === "deployed" ? (workflow.deployedVersion ?? "deployed") : "live");
    const found = await definitionOf(ctx, workflowId, wanted, workflow.definition);
    if (!found.ok) return found;
    definition = found.value;
    childMode = wanted === "live" ? "live" : "deployed";
  }
  const plan = await getWorkspacePlan(ctx.db, ctx.workspaceId);
  if (!plan) return { ok: false, reason: notFound("workspace") };
  const loaded = new Map<string, Promise<WorkflowDefinition | null>>();
  const loadChild = (id: string) => {
    let p = loaded.get(id);
    if (!p) {
      p = childWorkflow(ctx.db, ctx.workspaceId, id, childMode).then((raw) => {
        const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
        return parsed?.success ? parsed.data : null;
      });
      loaded.set(id, p);
    }
    return p;
  };
  const setup = { definition, loadChild, workflowId, group, row, plan };
  if (!req.allowPaid) {
    const paid = await paidBlocks(setup);
    if (paid.length > 0)
      return refuse(
        "allowPaid",
        `the workflow has paid blocks (${paid.join(", ")}): pass allowPaid: true to run them, and be charged`,
      );
  }
  return { ok: true, value: { ...setup, inputs: { ...mapped, ...(req.inputs ?? {}) } } };
}

/** Whether a block costs credits when it answers: a priced enrichment or a priced model. */
function paidKind(block: Block): string | null {
  if (block.type === "enrichment")
    return (getEnrichment(block.enrichmentId)?.cost ?? 0) > 0 ? block.enrichmentId : null;
  if (block.type === "llm")
    return llmCostMilli(llmPriceOf(block.model), { inputTokens: 1_000, outputTokens: 1_000 }) > 0
      ? `llm ${block.model}`
      : null;
  return null;
}

/**
 * The paid blocks of the definition and of the sub-workflows it names (loaded by id, as
 * deep as a run may nest), as `blockId (what)`, a sub-workflow's as `parent › blockId`.
 * What only an expression decides at run time is not seen; a missing child is skipped
 * (the run fails on it).
 */
async function paidBlocks(
  setup: Pick<TestSetup, "definition" | "loadChild" | "workflowId">,
): Promise<string[]> {
  const found: string[] = [];
  const walk = async (def: WorkflowDefinition, path: string[], prefix: string) => {
    for (const block of def.blocks) {
      const kind = paidKind(block);
      if (kind) found.push(`${prefix}${block.id} (${kind})`);
      if (block.type !== "workflow" && block.type !== "foreach") continue;
      if (path.includes(block.workflowId) || path.length >= MAX_DEPTH) continue;
      const child = await setup.loadChild(block.workflowId);
      if (child) await walk(child, [...path, block.workflowId], `${prefix}${block.id} › `);
    }
  };
  await walk(setup.definition, [setup.workflowId], "");
  return found;
}
