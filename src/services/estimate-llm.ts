/**
 * The dry run's llm cost: what the llm blocks of a workflow group would reserve, row by
 * row — each call priced as its reservation is (CELLFLOW_LLM_PRICES: the prompt's and the
 * system message's tokens, `estimateTokens`, at the input price, plus the output cap at the
 * output price), with each row's prompt rendered from the row's values as the workflow sees them
 * (`inputs` through the group's mapping, `row` by column name). Read-only and bounded: at
 * most RENDER_ROWS cells are rendered, a page of rows per statement; a cell past that is
 * counted at its prompt's fixed text (the template without its values) and the output cap,
 * and the estimate says it is a lower bound. So does a prompt that reads what earlier
 * blocks produce (`blocks`, `vars`), or a secret: those parts count as empty. A cell whose
 * required inputs are missing is skipped by the run (no call) and a prompt whose template
 * fails fails its block before the call: both cost nothing here. A schema-repair call (a
 * second call after an answer that fails its schema) is not counted: it happens only then.
 */

import { llmPriceOf } from "@/config/llm-prices";
import type { WorkflowGroup } from "@/contracts/table";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { llmCostMilli } from "@/domain/llm-pricing";
import { DEFAULT_MAX_TOKENS, estimateTokens } from "@/domain/llm-tokens";
import { groupInputs } from "@/domain/table-schema";
import { parseTemplate, templateExpressions } from "@/domain/templates";
import type { TypedCondition } from "@/domain/where";
import { type ExpressionScope, renderTemplate } from "@/execution/expressions";
import { scopeInputs } from "@/store/cells/scope-inputs";
import type { StampScope } from "@/store/cells/stamp";
import type { ServiceContext } from "./context";

/** Cells whose prompts are rendered; past them, prompts count at their fixed text. */
const RENDER_ROWS = 10_000;
/** Rows per page: one statement each. */
const PAGE_ROWS = 2_000;

/**
 * What of an llm block the estimate reads: a block without `system` sends no system
 * message (with one, it is sent as written), without `maxTokens` it asks for
 * DEFAULT_MAX_TOKENS.
 */
export interface LlmSite {
  id: string;
  model: string;
  prompt: string;
  system?: string;
  maxTokens?: number;
}

/** The milli-credits of one call from its rendered texts. */
function callMilli(site: LlmSite, prompt: string, system: string): number {
  return llmCostMilli(llmPriceOf(site.model), {
    inputTokens: estimateTokens(system) + estimateTokens(prompt),
    outputTokens: site.maxTokens ?? DEFAULT_MAX_TOKENS,
  });
}

/** A template without its values: the least its rendering can be. */
const fixedText = (template: string): string =>
  parseTemplate(template)
    .map((p) => p.literal)
    .join("");

/** The least one call can reserve: its fixed text and its output cap. */
export function fixedCallMilli(site: LlmSite): number {
  return callMilli(site, fixedText(site.prompt), site.system ?? "");
}

/** Why a site's rendered prompt is still only a lower bound (null: it is what the call sends). */
function partialReason(site: LlmSite): string | null {
  const reads = templateExpressions(site.prompt);
  return reads.some((e) => /\b(blocks|vars|secrets)\b/.test(e))
    ? `llm block "${site.id}" reads what earlier blocks produce (or a secret): its prompt is counted without those values`
    : null;
}

export interface LlmGroupCost {
  /** Milli-credits of the group's cells in scope. */
  milli: number;
  unknown: string | null;
}

/**
 * The group's cells in scope, each costing `fixedMilli` (its other paid calls) plus its
 * llm calls, every call over the row's budget left out (never made) and each cell at most
 * the budget.
 */
export async function llmGroupCost(
  ctx: ServiceContext,
  args: {
    scope: StampScope & { limit: number | null };
    group: WorkflowGroup;
    definition: WorkflowDefinition;
    /** The table's columns (id → name): the workflow's `row` is by name. */
    columns: readonly { id: string; name: string }[];
    sites: readonly LlmSite[];
    /** Cells that would run (stamped, their run condition holding). */
    cells: number;
    fixedMilli: number;
    perRowMilli: number | null;
    runIf: readonly TypedCondition[];
    /** Cells rendered at most (default RENDER_ROWS). */
    renderRows?: number;
  },
): Promise<LlmGroupCost> {
  const { scope, group, sites, perRowMilli } = args;
  const bound = args.renderRows ?? RENDER_ROWS;
  const callCost = (milli: number) => (perRowMilli !== null && milli > perRowMilli ? 0 : milli);
  const cellCost = (llm: number) => {
    const total = args.fixedMilli + llm;
    return perRowMilli === null ? total : Math.min(total, perRowMilli);
  };
  const required = args.definition.inputs.filter((i) => i.required).map((i) => i.name);
  const columnIds = [
    ...new Set([...args.columns.map((c) => c.id), ...Object.values(group.inputs)]),
  ];
  let milli = 0;
  let rendered = 0;
  let scanned = 0;
  // Whether the bound, not the end of the scope, ended the rendering.
  let bounded = false;
  for (let after = -1; ; ) {
    const left = scope.limit === null ? PAGE_ROWS : scope.limit - scanned;
    if (rendered >= bound) {
      bounded = left > 0;
      break;
    }
    const maxRows = Math.min(PAGE_ROWS, left, bound - rendered);
    if (maxRows <= 0) break;
    const page = await scopeInputs(ctx.db, scope, {
      groupId: group.id,
      columns: columnIds,
      afterPosition: after,
      maxRows,
      runIf: args.runIf,
    });
    for (const data of page.rows) {
      rendered += 1;
      const inputs = groupInputs(group, data);
      // The attempt skips a cell whose required inputs are missing: nothing is called.
      if (required.some((name) => missing(inputs[name]))) continue;
      const row = Object.fromEntries(args.columns.map((c) => [c.name, data[c.id] ?? null]));
      const expressionScope: ExpressionScope = { inputs, row, blocks: {}, vars: {}, secrets: {} };
      let llm = 0;
      for (const site of sites) llm += callCost(await renderedMilli(site, expressionScope));
      milli += cellCost(llm);
    }
    scanned += page.scanned;
    if (page.after === null) break;
    after = page.after;
  }
  const rest = bounded ? Math.max(0, args.cells - rendered) : 0;
  if (rest > 0) {
    let llm = 0;
    for (const site of sites) llm += callCost(fixedCallMilli(site));
    milli += rest * cellCost(llm);
  }
  const unknown =
    rest > 0
      ? `llm prompts are rendered for the first ${bound} cells; the other ${rest} are counted at their prompts' fixed text and output caps`
      : (sites.map(partialReason).find((r) => r !== null) ?? null);
  return { milli, unknown };
}

/** One call on one row; a template that fails fails its block before the call: 0. */
async function renderedMilli(site: LlmSite, scope: ExpressionScope): Promise<number> {
  try {
    // The system message is sent as written (the block renders only the prompt).
    return callMilli(site, await renderTemplate(site.prompt, scope), site.system ?? "");
  } catch {
    return 0;
  }
}

const missing = (v: unknown) => v === undefined || v === null || v === "";
