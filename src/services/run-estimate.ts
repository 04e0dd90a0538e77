/**
 * Dry runs: what a run request would stamp and what it would cost, writing nothing (no
 * dispatch, no cell, no event). Invariants: the rows and cells are counted by the same
 * conditions the stamping uses (`countScope`), so a run started right after, on a table
 * nobody changed, stamps exactly these; credits count each paid enrichment once per
 * stamped cell (the enrichment group's own, and every paid enrichment block of a
 * workflow group, sub-workflows included); where that count depends on data only the run
 * will see (paid blocks inside a `foreach`), the estimate says it is a lower bound and
 * names the group. A paid enrichment group's cells the workspace's result cache would
 * serve (a fresh answer, or inputs an earlier cell of the run asks for) cost nothing and
 * are counted apart (`cached`). Cells on rows where their group's run condition (`runIf`)
 * does not hold now, judged in SQL by the compiler the claim uses, would end
 * `condition_not_met` without a call: counted apart (`skippedByCondition`), charged 0.
 * Under a per-row budget (the request's `maxCreditsPerRow`, or the table's default), no
 * call costing more than the budget is made, a cell's credits are at most the budget, and
 * each row's at most the budget too: the total is the lesser of the groups' sum and
 * rows × budget (`rowBudgetCapped` says it lowered the estimate). A waterfall group counts
 * every paid step of each cell, the most it can cost (the step that wins is known only
 * when it runs): the estimate names it in `upperBound`. The llm blocks of a workflow
 * group's own workflow are priced row by row from each row's rendered prompt, as their
 * calls would be reserved (estimate-llm.ts, which says where that is only a lower bound);
 * an llm block in a sub-workflow counts at its prompt's fixed text, a lower bound too.
 */

import { readEnv } from "@/config/env";
import type { CreateRunRequest, RunEstimate, UnknownCredits } from "@/contracts/runs";
import type { Group, WaterfallGroup, WorkflowGroup } from "@/contracts/table";
import { type Block, WorkflowDefinition } from "@/contracts/workflow";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { runIfOf, type TypedCondition } from "@/domain/where";
import { getEnrichment } from "@/enrichments/registry";
import { countScope } from "@/store/cells/stamp";
import { childWorkflow } from "@/store/engine-reads";
import type { ServiceContext } from "./context";
import { cacheServedCells } from "./estimate-cache";
import { fixedCallMilli, type LlmSite, llmGroupCost } from "./estimate-llm";
import { ownTable, readRunScope } from "./run-scope";

/**
 * What one cell of a group costs, and why that may not be all; `sites`: the llm blocks of
 * the group's own workflow, whose cost depends on each row's prompt (not in `credits`).
 */
interface CellCost {
  credits: number;
  unknown: string | null;
  sites?: LlmSite[];
}

type LoadWorkflow = (workflowId: string) => Promise<WorkflowDefinition | null>;

export async function estimateRun(
  ctx: ServiceContext,
  tableId: string,
  req: CreateRunRequest,
): Promise<Result<RunEstimate, Failure>> {
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const scoped = readRunScope(table, tableId, req);
  if (!scoped.ok) return scoped;
  const { schema, scope } = scoped.value;
  const { groupIds } = scope;
  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  const runIf: Record<string, TypedCondition[]> = {};
  for (const groupId of groupIds) {
    const group = byId.get(groupId);
    const conditions = group ? runIfOf(schema, group) : null;
    if (conditions?.ok && conditions.value.length > 0) runIf[groupId] = conditions.value;
  }
  const counted = await countScope(ctx.db, scope, runIf);
  const cacheTtlMs = readEnv().CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS * 3_600_000;

  const groups: RunEstimate["groups"] = [];
  const unknown: UnknownCredits[] = [];
  const upperBound: UnknownCredits[] = [];
  let cells = 0;
  let skippedByCondition = 0;
  let estimatedCredits = 0;
  const perRow = req.maxCreditsPerRow ?? table.maxCreditsPerRow;
  for (const groupId of groupIds) {
    const n = counted.cells[groupId] ?? 0;
    const notMet = counted.notMet[groupId] ?? 0;
    const group = byId.get(groupId);
    const cost =
      group && n > 0 ? await groupCost(ctx, group, perRow) : { credits: 0, unknown: null };
    if (cost.unknown && !cost.sites?.length) unknown.push({ groupId, reason: cost.unknown });
    const enrichment = group?.kind === "enrichment" ? getEnrichment(group.enrichmentId) : undefined;
    const cached =
      group?.kind === "enrichment" && enrichment && cost.credits > 0 && cacheTtlMs > 0
        ? await cacheServedCells(ctx, scope, group, enrichment, cacheTtlMs, runIf[groupId] ?? [])
        : 0;
    const calling = n - notMet - cached;
    const credits =
      group?.kind === "workflow" && cost.sites && cost.sites.length > 0
        ? await llmCredits(
            ctx,
            {
              scope,
              group,
              columns: schema.columns,
              cost: { ...cost, sites: cost.sites },
              cells: calling,
              perRow,
              runIf: runIf[groupId] ?? [],
            },
            unknown,
          )
        : cost.credits * calling;
    const isUpperBound = group?.kind === "waterfall" && credits > 0;
    if (isUpperBound)
      upperBound.push({
        groupId,
        reason:
          "a waterfall's cell pays only the steps it calls, up to the first that wins; this counts every paid step",
      });
    groups.push({
      groupId,
      cells: n,
      credits,
      cached,
      skippedByCondition: notMet,
      ...(isUpperBound ? { upperBound: true } : {}),
    });
    cells += n;
    skippedByCondition += notMet;
    estimatedCredits += credits;
  }
  const rowsCap = perRow === null ? null : roundCredits(perRow * counted.rows);
  const rowBudgetCapped = rowsCap !== null && rowsCap < estimatedCredits;
  return {
    ok: true,
    value: {
      rows: counted.rows,
      cells,
      skippedByCondition,
      estimatedCredits: rowBudgetCapped ? rowsCap : roundCredits(estimatedCredits),
      maxCreditsPerRow: perRow,
      rowBudgetCapped,
      estimate: unknown.length > 0 ? "lower_bound" : "complete",
      unknown,
      upperBound,
      groups,
    },
  };
}

/**
 * A workflow group with llm blocks: its cells priced row by row (estimate-llm.ts), with
 * the cell's other paid calls, under the row's budget. Says why it may be a lower bound
 * (its prompts' values, or its other calls').
 */
async function llmCredits(
  ctx: ServiceContext,
  args: {
    scope: Parameters<typeof llmGroupCost>[1]["scope"];
    group: WorkflowGroup;
    columns: readonly { id: string; name: string }[];
    cost: CellCost & { sites: LlmSite[] };
    cells: number;
    perRow: number | null;
    runIf: readonly TypedCondition[];
  },
  unknown: UnknownCredits[],
): Promise<number> {
  const definition = await workflowLoader(ctx, args.group.version)(args.group.workflowId);
  if (!definition || args.cells <= 0) return 0;
  const priced = await llmGroupCost(ctx, {
    ...args,
    definition,
    sites: args.cost.sites,
    fixedMilli: Math.round(args.cost.credits * 1000),
    perRowMilli: args.perRow === null ? null : Math.round(args.perRow * 1000),
  });
  const reason = priced.unknown ?? args.cost.unknown;
  if (reason) unknown.push({ groupId: args.group.id, reason });
  return priced.milli / 1000;
}

/** Credits to 1/1000, as they are kept (sums of fractions drift in floating point). */
const roundCredits = (n: number): number => Math.round(n * 1000) / 1000;

/** One call under a per-row budget: a call costing more than the budget is never made. */
const callCost = (cost: number, perRow: number | null): number =>
  perRow !== null && cost > perRow ? 0 : cost;

async function groupCost(
  ctx: ServiceContext,
  group: Group,
  perRow: number | null,
): Promise<CellCost> {
  if (group.kind === "enrichment")
    return {
      credits: callCost(getEnrichment(group.enrichmentId)?.cost ?? 0, perRow),
      unknown: null,
    };
  const cost =
    group.kind === "waterfall"
      ? await waterfallCost(ctx, group, perRow)
      : await workflowCost(group.workflowId, workflowLoader(ctx, group.version), [], perRow, []);
  return perRow === null ? cost : { ...cost, credits: Math.min(cost.credits, perRow) };
}

/** Loads each workflow once, in the version the group (or step) runs. */
function workflowLoader(ctx: ServiceContext, version: "live" | "deployed"): LoadWorkflow {
  const loaded = new Map<string, WorkflowDefinition | null>();
  return async (workflowId) => {
    if (!loaded.has(workflowId)) {
      const raw = await childWorkflow(ctx.db, ctx.workspaceId, workflowId, version);
      const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
      loaded.set(workflowId, parsed?.success ? parsed.data : null);
    }
    return loaded.get(workflowId) ?? null;
  };
}

/**
 * Every step as if each were called: which step wins is known only when the cell runs,
 * so this is the most a cell can cost (the caller says it is an upper bound).
 */
async function waterfallCost(
  ctx: ServiceContext,
  group: WaterfallGroup,
  perRow: number | null,
): Promise<CellCost> {
  const loaders = {
    live: workflowLoader(ctx, "live"),
    deployed: workflowLoader(ctx, "deployed"),
  };
  let credits = 0;
  let unknown: string | null = null;
  for (const step of group.steps) {
    const cost =
      "enrichmentId" in step
        ? { credits: callCost(getEnrichment(step.enrichmentId)?.cost ?? 0, perRow), unknown: null }
        : await workflowCost(step.workflowId, loaders[step.version], [], perRow);
    credits += cost.credits;
    unknown ??= cost.unknown;
  }
  return { credits, unknown };
}

/**
 * One run of a workflow: its paid enrichment blocks, each counted whether or not a
 * condition would take its branch (the estimate errs towards paying). A workflow that
 * is missing or calls itself costs nothing here: its cell ends in error before any call.
 */
async function workflowCost(
  workflowId: string,
  load: LoadWorkflow,
  path: readonly string[],
  perRow: number | null,
  /** The group's own workflow: its llm blocks are collected here, priced per row later. */
  sites?: LlmSite[],
): Promise<CellCost> {
  if (path.includes(workflowId)) return { credits: 0, unknown: null };
  const definition = await load(workflowId);
  if (!definition) return { credits: 0, unknown: null };
  const inner = [...path, workflowId];
  let credits = 0;
  let unknown: string | null = null;
  for (const block of definition.blocks) {
    if (block.type === "llm" && sites) {
      sites.push(block);
      continue;
    }
    const cost = await blockCost(block, load, inner, perRow);
    credits += cost.credits;
    unknown ??= cost.unknown;
  }
  return { credits, unknown, ...(sites ? { sites } : {}) };
}

async function blockCost(
  block: Block,
  load: LoadWorkflow,
  path: string[],
  perRow: number | null,
): Promise<CellCost> {
  switch (block.type) {
    case "enrichment":
      return {
        credits: callCost(getEnrichment(block.enrichmentId)?.cost ?? 0, perRow),
        unknown: null,
      };
    case "llm": {
      // Inside a sub-workflow its prompt reads the child's inputs, known only when it runs.
      const site: LlmSite = block;
      return {
        credits: callCost(fixedCallMilli(site) / 1000, perRow),
        unknown: `llm block "${block.id}" runs in a sub-workflow: its prompt is counted at its fixed text and output cap`,
      };
    }
    case "workflow":
      return workflowCost(block.workflowId, load, path, perRow);
    case "foreach": {
      // Runs its workflow once per item, and the items are known only when it runs.
      const each = await workflowCost(block.workflowId, load, path, perRow);
      const paid = each.credits > 0 || each.unknown !== null;
      return {
        credits: 0,
        unknown: paid
          ? `foreach block "${block.id}" runs paid calls once per item; items are counted only when it runs`
          : null,
      };
    }
    default:
      return { credits: 0, unknown: null };
  }
}
