/**
 * The block graph of a definition as it is being typed: each block's id, type, a one-line
 * summary and where it goes next (`next`, a fan-out list, or a condition's `true` /
 * `false` ports), the entry block, and the problems the API would refuse (unknown type,
 * duplicate id, `next` naming no block, not exactly one entry, a cycle). It reads any
 * JSON, however incomplete: the API stays the judge, this is the preview.
 */
import { BLOCK_TYPES, type BlockType } from "@/contracts/workflow";
import { findCycle } from "@/domain/graph";

export interface Edge {
  /** `true` / `false` for a condition's ports; null for a plain `next`. */
  port: string | null;
  target: string;
  /** Whether a block with that id exists. */
  known: boolean;
}

export interface BlockSummary {
  index: number;
  id: string;
  type: string;
  knownType: boolean;
  name: string | null;
  /** What the block does, in one line: its expression, its request, its model… */
  detail: string;
  edges: Edge[];
  entry: boolean;
}

export interface InputSummary {
  name: string;
  type: string;
  required: boolean;
}

export interface Problem {
  /** In the API's spelling, relative to the definition: `blocks.0.next`. */
  path: string;
  message: string;
}

export interface DefinitionSummary {
  inputs: InputSummary[];
  blocks: BlockSummary[];
  entryIds: string[];
  /** The block ids of a cycle, in order, when there is one. */
  cycle: string[] | null;
  problems: Problem[];
}

export const KNOWN_BLOCK_TYPES: readonly BlockType[] = BLOCK_TYPES;

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function oneLine(s: string, max = 90): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function detailOf(b: Record<string, unknown>): string {
  switch (b.type) {
    case "transform":
    case "condition":
      return oneLine(str(b.expression) ?? "");
    case "http":
      return oneLine(`${str(b.method) ?? "?"} ${str(b.url) ?? ""}`);
    case "foreach":
      return oneLine(`each of ${str(b.items) ?? "?"} → workflow ${str(b.workflowId) ?? "?"}`);
    case "workflow":
      return oneLine(`workflow ${str(b.workflowId) ?? "?"}`);
    case "approval":
      return oneLine(str(b.prompt) ?? "waits for approval");
    case "wait":
      return typeof b.ms === "number" ? `${b.ms} ms` : oneLine(str(b.ms) ?? "");
    case "fail":
      return oneLine(str(b.message) ?? "");
    case "enrichment":
      return oneLine(str(b.enrichmentId) ?? "");
    case "llm":
      return oneLine(`${str(b.model) ?? "?"}: ${str(b.prompt) ?? ""}`);
    default:
      return "";
  }
}

/** Where a block's `next` leads, in the order written (a condition: `true`, then `false`). */
function rawEdges(next: unknown): { port: string | null; target: string }[] {
  if (typeof next === "string") return [{ port: null, target: next }];
  if (Array.isArray(next))
    return next
      .filter((t): t is string => typeof t === "string")
      .map((t) => ({ port: null, target: t }));
  if (isRecord(next)) {
    return (["true", "false"] as const).flatMap((port) => {
      const t = next[port];
      return typeof t === "string" ? [{ port, target: t }] : [];
    });
  }
  return [];
}

export function describeDefinition(value: unknown): DefinitionSummary {
  const summary: DefinitionSummary = {
    inputs: [],
    blocks: [],
    entryIds: [],
    cycle: null,
    problems: [],
  };
  if (!isRecord(value)) {
    summary.problems.push({ path: "", message: 'the definition must be an object with "blocks"' });
    return summary;
  }
  summary.inputs = readInputs(value.inputs);
  if (!Array.isArray(value.blocks)) {
    summary.problems.push({ path: "blocks", message: '"blocks" must be a list of blocks' });
    return summary;
  }
  if (value.blocks.length === 0) {
    summary.problems.push({ path: "blocks", message: "a workflow needs at least one block" });
    return summary;
  }
  const ids = readBlocks(value.blocks, summary);
  const incoming = linkEdges(summary, ids);
  markEntries(summary, incoming);
  const cycle = cycleOf(summary.blocks);
  summary.cycle = cycle;
  if (cycle) summary.problems.push({ path: "blocks", message: `cycle: ${cycle.join(" → ")}` });
  return summary;
}

/** The inputs that have a name; anything else in the list is skipped. */
function readInputs(inputs: unknown): InputSummary[] {
  if (!Array.isArray(inputs)) return [];
  return inputs.flatMap((inp) =>
    isRecord(inp) && typeof inp.name === "string"
      ? [{ name: inp.name, type: str(inp.type) ?? "json", required: inp.required === true }]
      : [],
  );
}

/**
 * Each block as written, its edges not yet checked; a block that is no object, has no id
 * or type, repeats an id or has an unknown type is a problem. The ids seen, for the edges.
 */
function readBlocks(blocks: unknown[], summary: DefinitionSummary): Set<string> {
  const seen = new Set<string>();
  blocks.forEach((raw, index) => {
    const b = isRecord(raw) ? raw : {};
    if (!isRecord(raw))
      summary.problems.push({ path: `blocks.${index}`, message: "a block must be an object" });
    const id = str(b.id) ?? "";
    const type = str(b.type) ?? "";
    if (id === "")
      summary.problems.push({ path: `blocks.${index}.id`, message: "a block needs an id" });
    else if (seen.has(id))
      summary.problems.push({
        path: `blocks.${index}.id`,
        message: `block id "${id}" is used twice`,
      });
    seen.add(id);
    const knownType = (KNOWN_BLOCK_TYPES as readonly string[]).includes(type);
    if (!knownType)
      summary.problems.push({
        path: `blocks.${index}.type`,
        message: type === "" ? "a block needs a type" : `unknown block type "${type}"`,
      });
    summary.blocks.push({
      index,
      id,
      type,
      knownType,
      name: str(b.name),
      detail: detailOf(b),
      edges: rawEdges(b.next).map((e) => ({ ...e, known: false })),
      entry: false,
    });
  });
  return seen;
}

/**
 * Marks each edge known when its target is a block (a `next` to nowhere or to the block
 * itself is a problem); gives the ids some edge points to.
 */
function linkEdges(summary: DefinitionSummary, ids: ReadonlySet<string>): Set<string> {
  const incoming = new Set<string>();
  for (const block of summary.blocks) {
    for (const edge of block.edges) {
      edge.known = ids.has(edge.target);
      incoming.add(edge.target);
      if (!edge.known) {
        summary.problems.push({
          path: `blocks.${block.index}.next`,
          message: `"next" names unknown block "${edge.target}"`,
        });
      } else if (edge.target === block.id) {
        summary.problems.push({
          path: `blocks.${block.index}.next`,
          message: `block "${block.id}" points to itself`,
        });
      }
    }
  }
  return incoming;
}

/** The entry blocks are those no edge points to; there must be exactly one. */
function markEntries(summary: DefinitionSummary, incoming: ReadonlySet<string>): void {
  for (const block of summary.blocks) {
    if (block.id !== "" && !incoming.has(block.id)) {
      block.entry = true;
      summary.entryIds.push(block.id);
    }
  }
  if (summary.entryIds.length !== 1) {
    summary.problems.push({
      path: "blocks",
      message:
        summary.entryIds.length === 0
          ? "no entry block: every block is the target of a next"
          : `exactly one entry block is allowed, found ${summary.entryIds.length}: ${summary.entryIds.join(", ")} (link them with "next")`,
    });
  }
}

/** A cycle through known edges (a block pointing to itself is reported apart), if any. */
function cycleOf(blocks: readonly BlockSummary[]): string[] | null {
  const edges = new Map<string, string[]>();
  for (const block of blocks) {
    if (block.id === "" || edges.has(block.id)) continue;
    edges.set(
      block.id,
      block.edges.filter((e) => e.known && e.target !== block.id).map((e) => e.target),
    );
  }
  return findCycle(edges.keys(), (id) => edges.get(id) ?? []);
}

/** The index of the block whose text holds `offset`, from the spans of a parse. */
export function blockAtOffset(
  spans: ReadonlyMap<string, { start: number; end: number }>,
  count: number,
  offset: number,
): number | null {
  for (let i = 0; i < count; i++) {
    const span = spans.get(`blocks.${i}`);
    if (span && offset >= span.start && offset <= span.end) return i;
  }
  return null;
}

/** The index of the block a path is about (`blocks.3.next` → 3), if any. */
export function blockIndexOfPath(path: string, prefix = ""): number | null {
  const rel = prefix !== "" && path.startsWith(`${prefix}.`) ? path.slice(prefix.length + 1) : path;
  const m = /^blocks\.(\d+)(?:\.|$)/.exec(rel);
  return m?.[1] === undefined ? null : Number(m[1]);
}

/**
 * A path the API reports, for people: `definition.blocks.1.next` → `block "check" › next`
 * (the block named by its id when known), `definition.inputs.0.name` → `inputs › 0 › name`.
 */
export function pathLabel(path: string, blockIds: readonly string[], prefix = ""): string {
  let rel = path;
  if (prefix !== "" && (path === prefix || path.startsWith(`${prefix}.`)))
    rel = path.slice(prefix.length + 1);
  if (rel === "") return "the whole definition";
  const parts = rel.split(".");
  const [head, index, ...rest] = parts;
  if (head === "blocks" && index !== undefined && /^\d+$/.test(index)) {
    const id = blockIds[Number(index)];
    const block = id ? `block "${id}"` : `block #${Number(index) + 1}`;
    return [block, ...rest].join(" › ");
  }
  return parts.join(" › ");
}
