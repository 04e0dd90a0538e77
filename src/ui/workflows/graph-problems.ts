/**
 * The problems of a definition as the graph shows them: on each block (its own problems
 * from graph.ts's summary, being in a cycle, being one of several entries, a workflow or
 * foreach block naming no workflow of the workspace) and for the whole graph (no entry,
 * several entries). Pure, from the summary and the workspace's workflow ids (null while
 * they load: no workflow id is called unknown before the list is known).
 */
import type { DefinitionSummary, Problem } from "./graph";
import { blockIndexOfPath } from "./graph";

export type EntryState =
  | { kind: "one"; id: string }
  | { kind: "none" }
  | { kind: "several"; ids: string[] };

export interface GraphProblems {
  /** Block index → what is wrong with it, for people. */
  byBlock: Map<number, string[]>;
  /** Every problem, the summary's and the unknown workflow ids, with paths. */
  all: Problem[];
  entry: EntryState;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Blocks that run another workflow and name one the workspace does not have. */
export function unknownWorkflowProblems(
  definition: unknown,
  workflowIds: ReadonlySet<string> | null,
): Problem[] {
  if (workflowIds === null || !isRecord(definition) || !Array.isArray(definition.blocks)) return [];
  return definition.blocks.flatMap((b, index) => {
    if (!isRecord(b) || (b.type !== "workflow" && b.type !== "foreach")) return [];
    const wf = b.workflowId;
    if (typeof wf !== "string" || workflowIds.has(wf)) return [];
    return [
      {
        path: `blocks.${index}.workflowId`,
        message: `workflow "${wf}" is not a workflow of this workspace`,
      },
    ];
  });
}

export function graphProblems(
  summary: DefinitionSummary,
  definition: unknown,
  workflowIds: ReadonlySet<string> | null,
): GraphProblems {
  const all = [...summary.problems, ...unknownWorkflowProblems(definition, workflowIds)];
  const byBlock = new Map<number, string[]>();
  const add = (index: number, message: string) => {
    const list = byBlock.get(index) ?? [];
    if (!list.includes(message)) list.push(message);
    byBlock.set(index, list);
  };
  for (const p of all) {
    const index = blockIndexOfPath(p.path);
    if (index !== null) add(index, p.message);
  }
  const indexOfId = new Map<string, number>();
  for (const b of summary.blocks) if (!indexOfId.has(b.id)) indexOfId.set(b.id, b.index);
  if (summary.cycle) {
    const message = `in a cycle: ${summary.cycle.join(" → ")}`;
    for (const id of new Set(summary.cycle)) {
      const index = indexOfId.get(id);
      if (index !== undefined) add(index, message);
    }
  }
  const ids = summary.entryIds;
  let entry: EntryState;
  if (summary.blocks.length === 0 || ids.length === 1) entry = { kind: "one", id: ids[0] ?? "" };
  else if (ids.length === 0) entry = { kind: "none" };
  else {
    entry = { kind: "several", ids };
    for (const id of ids) {
      const index = indexOfId.get(id);
      if (index !== undefined)
        add(index, `one of ${ids.length} entry blocks: link them with "next" so one remains`);
    }
  }
  return { byBlock, all, entry };
}
