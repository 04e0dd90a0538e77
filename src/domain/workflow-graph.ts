/**
 * Invariants of a workflow definition: block ids unique; every `next` names an existing
 * block; exactly one entry block (none points to it); no cycle, so every run ends;
 * every expression and template parses.
 */
import jsonata from "jsonata";
import type { Issue } from "@/contracts/common";
import type { Block, WorkflowDefinition } from "@/contracts/workflow";
import { findCycle } from "./graph";
import { assertNever } from "./statuses";
import { templateExpressions } from "./templates";

/** The blocks a block may continue to, whatever port is taken. */
export function successors(block: Block): string[] {
  const next = block.next;
  if (next === undefined) return [];
  if (typeof next === "string") return [next];
  if (Array.isArray(next)) return next;
  return [next.true, next.false].filter((n): n is string => n !== undefined);
}

/** Expressions (JSONata) and templates a block holds, with their paths, for syntax checks. */
function sources(block: Block): { path: string; expression?: string; template?: string }[] {
  switch (block.type) {
    case "transform":
    case "condition":
      return [{ path: "expression", expression: block.expression }];
    case "foreach":
      return [{ path: "items", expression: block.items }];
    case "workflow":
      return Object.entries(block.inputs ?? {}).map(([k, v]) => ({
        path: `inputs.${k}`,
        expression: v,
      }));
    case "enrichment":
      return Object.entries(block.inputs).map(([k, v]) => ({ path: `inputs.${k}`, expression: v }));
    case "http":
      return [
        { path: "url", template: block.url },
        ...Object.entries(block.headers ?? {}).map(([k, v]) => ({
          path: `headers.${k}`,
          template: v,
        })),
        ...(typeof block.body === "string" ? [{ path: "body", template: block.body }] : []),
      ];
    case "approval":
      return block.prompt === undefined ? [] : [{ path: "prompt", template: block.prompt }];
    case "fail":
      return [{ path: "message", template: block.message }];
    case "llm":
      return [{ path: "prompt", template: block.prompt }];
    case "wait":
      return typeof block.ms === "string" ? [{ path: "ms", expression: block.ms }] : [];
    default:
      return assertNever(block);
  }
}

function syntaxError(expression: string): string | null {
  try {
    jsonata(expression);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function checkWorkflowDefinition(def: WorkflowDefinition): Issue[] {
  const issues: Issue[] = [];
  const index = new Map<string, number>();
  def.blocks.forEach((b, i) => {
    if (index.has(b.id))
      issues.push({ path: `blocks.${i}.id`, message: `block id "${b.id}" is used twice` });
    else index.set(b.id, i);
  });

  const incoming = new Set<string>();
  def.blocks.forEach((b, i) => {
    for (const target of successors(b)) {
      if (!index.has(target)) {
        issues.push({
          path: `blocks.${i}.next`,
          message: `"next" names unknown block "${target}"`,
        });
      } else if (target === b.id) {
        issues.push({ path: `blocks.${i}.next`, message: `block "${b.id}" points to itself` });
      }
      incoming.add(target);
    }
    for (const src of sources(b)) {
      const exprs =
        src.expression !== undefined ? [src.expression] : templateExpressions(src.template ?? "");
      for (const e of exprs) {
        const err = syntaxError(e);
        if (err)
          issues.push({
            path: `blocks.${i}.${src.path}`,
            message: `expression does not parse: ${err}`,
          });
      }
    }
  });

  const entries = def.blocks.filter((b) => !incoming.has(b.id));
  if (entries.length !== 1) {
    issues.push({
      path: "blocks",
      message:
        entries.length === 0
          ? "no entry block: every block is the target of a next"
          : `exactly one entry block is allowed, found ${entries.length}: ${entries.map((b) => b.id).join(", ")}`,
    });
  }

  const names = new Set<string>();
  def.inputs.forEach((inp, i) => {
    if (names.has(inp.name))
      issues.push({ path: `inputs.${i}.name`, message: `input "${inp.name}" is declared twice` });
    names.add(inp.name);
  });

  if (issues.length === 0) {
    const byId = new Map(def.blocks.map((b) => [b.id, b]));
    const cycle = findCycle(byId.keys(), (id) => {
      const block = byId.get(id);
      return block ? successors(block) : [];
    });
    if (cycle) issues.push({ path: "blocks", message: `cycle: ${cycle.join(" → ")}` });
  }
  return issues;
}

export function entryBlock(def: WorkflowDefinition): Block | undefined {
  const incoming = new Set(def.blocks.flatMap(successors));
  return def.blocks.find((b) => !incoming.has(b.id));
}
