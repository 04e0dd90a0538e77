/**
 * The block graph as a picture's parts: from graph.ts's summary of the definition (never
 * a second reading of the JSON), the nodes and edges the drawn graph shows, placed by
 * dagre, top to bottom. A pure function, so what is drawn is tested without a browser:
 * blocks (id, type, name), plain and fan-out `next` edges, a condition's `true`/`false`
 * as labelled edges, joins (several predecessors), the entry, the block to highlight and
 * the selected one. A `next` naming no block is drawn to a marked placeholder instead of
 * vanishing; duplicate or empty ids still get a node of their own (keyed by index).
 */
import { Graph, layout } from "@dagrejs/dagre";
import type { Edge, Node } from "@xyflow/react";
import type { DefinitionSummary } from "./graph";
import type { BlockRun } from "./try-panel";

export const NODE_WIDTH = 210;
export const NODE_HEIGHT = 68;
/** With a try's results, a node shows a line more: its status, time and output or error. */
const NODE_HEIGHT_WITH_RESULT = 100;
const MISSING_WIDTH = 150;
const MISSING_HEIGHT = 40;
/** Room dagre keeps on an edge for its `true` / `false` label. */
const LABEL_WIDTH = 40;
const LABEL_HEIGHT = 18;

export interface BlockNodeData extends Record<string, unknown> {
  index: number;
  blockId: string;
  type: string;
  knownType: boolean;
  name: string | null;
  detail: string;
  entry: boolean;
  /** More than one edge leads here. */
  join: boolean;
  /** No edge leaves: the run ends (or fails) here. */
  end: "ends" | "fails" | null;
  /** The block the page was opened for (`?block=`), e.g. the one a cell failed in. */
  highlighted: boolean;
  selected: boolean;
  /** Problems and save issues pointing into this block. */
  issues: number;
  /** What they say, for the block's tooltip. */
  messages: string[];
  /** A condition: its `true` and `false` ports are two handles. */
  condition: boolean;
  /** The block's run in the last try, if any. */
  result: BlockRun | null;
}

export interface MissingNodeData extends Record<string, unknown> {
  /** The id a `next` names that no block has. */
  target: string;
}

export type BlockNode = Node<BlockNodeData, "block">;
export type MissingNode = Node<MissingNodeData, "missing">;
export type GraphNode = BlockNode | MissingNode;

export interface GraphEdgeData extends Record<string, unknown> {
  port: string | null;
  known: boolean;
}
export type GraphEdge = Edge<GraphEdgeData>;

export interface GraphPicture {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** The node id of the highlighted block, when the definition has it. */
  highlightedNode: string | null;
  width: number;
  height: number;
}

export interface PictureOptions {
  /** The block id to highlight (the first block with that id). */
  highlight?: string | null;
  /** The block index selected in the editor. */
  selected?: number | null;
  /** Issues per block index. */
  issueCounts?: ReadonlyMap<number, number>;
  /** What the issues say, per block index (the count is their number when given). */
  issueMessages?: ReadonlyMap<number, readonly string[]>;
  /** Each block's run in a try, by block id. */
  results?: Readonly<Record<string, BlockRun>> | null;
}

const blockNodeId = (index: number): string => `b${index}`;
const missingNodeId = (target: string): string => `missing:${target}`;
const nameOf = (id: string, index: number): string => id || `#${index + 1}`;

export function graphPicture(summary: DefinitionSummary, opts: PictureOptions = {}): GraphPicture {
  const { highlight = null, selected = null, issueCounts = new Map<number, number>() } = opts;
  const { issueMessages = new Map<number, string[]>(), results = null } = opts;
  const nodeHeight = results ? NODE_HEIGHT_WITH_RESULT : NODE_HEIGHT;
  // An id names its first block, as the blocks panel's links do.
  const nodeOfId = new Map<string, string>();
  for (const b of summary.blocks)
    if (b.id !== "" && !nodeOfId.has(b.id)) nodeOfId.set(b.id, blockNodeId(b.index));

  const edges: GraphEdge[] = [];
  const missing = new Set<string>();
  const incoming = new Map<string, number>();
  for (const b of summary.blocks) {
    b.edges.forEach((e, k) => {
      const known = nodeOfId.get(e.target);
      const target = known ?? missingNodeId(e.target);
      if (!known) missing.add(e.target);
      else incoming.set(target, (incoming.get(target) ?? 0) + 1);
      const classes = ["wf-gedge"];
      if (e.port !== null) classes.push(`wf-gedge-${e.port}`);
      if (!known) classes.push("wf-gedge-missing");
      edges.push({
        id: `${blockNodeId(b.index)}>${k}`,
        source: blockNodeId(b.index),
        sourceHandle: e.port ?? "out",
        target,
        targetHandle: "in",
        ...(e.port !== null ? { label: e.port } : {}),
        ariaLabel: `${nameOf(b.id, b.index)} to ${e.target}${e.port !== null ? ` when ${e.port}` : ""}${known ? "" : " (no such block)"}`,
        className: classes.join(" "),
        data: { port: e.port, known: known !== undefined },
      });
    });
  }

  const highlightedNode = highlight === null ? null : (nodeOfId.get(highlight) ?? null);
  const nodes: GraphNode[] = summary.blocks.map((b) => ({
    id: blockNodeId(b.index),
    type: "block",
    ariaLabel: `block ${nameOf(b.id, b.index)}, ${b.type || "no type"}${b.entry ? ", entry" : ""}`,
    position: { x: 0, y: 0 },
    width: NODE_WIDTH,
    height: nodeHeight,
    data: {
      index: b.index,
      blockId: b.id,
      type: b.type,
      knownType: b.knownType,
      name: b.name,
      detail: b.detail,
      entry: b.entry,
      join: (incoming.get(blockNodeId(b.index)) ?? 0) > 1,
      end: b.edges.length > 0 ? null : b.type === "fail" ? "fails" : "ends",
      highlighted: highlightedNode === blockNodeId(b.index),
      selected: selected === b.index,
      issues: issueMessages.get(b.index)?.length ?? issueCounts.get(b.index) ?? 0,
      messages: [...(issueMessages.get(b.index) ?? [])],
      condition: b.type === "condition",
      result: (results && Object.hasOwn(results, b.id) ? results[b.id] : undefined) ?? null,
    },
  }));
  for (const target of missing) {
    nodes.push({
      id: missingNodeId(target),
      type: "missing",
      ariaLabel: `no block "${target}"`,
      position: { x: 0, y: 0 },
      width: MISSING_WIDTH,
      height: MISSING_HEIGHT,
      data: { target },
    });
  }

  const { width, height } = place(nodes, edges);
  return { nodes, edges, highlightedNode, width, height };
}

/** Sets each node's position (top-left, as the drawing wants) from a dagre layout. */
function place(nodes: GraphNode[], edges: GraphEdge[]): { width: number; height: number } {
  const g = new Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 36, ranksep: 56, marginx: 8, marginy: 8 });
  for (const n of nodes) g.setNode(n.id, { width: n.width ?? 0, height: n.height ?? 0 });
  for (const e of edges) {
    const labelled = typeof e.label === "string";
    g.setEdge(
      e.source,
      e.target,
      labelled ? { width: LABEL_WIDTH, height: LABEL_HEIGHT, labelpos: "c" } : {},
      e.id,
    );
  }
  layout(g);
  for (const n of nodes) {
    const at = g.node(n.id);
    n.position = {
      x: (at?.x ?? 0) - (n.width ?? 0) / 2,
      y: (at?.y ?? 0) - (n.height ?? 0) / 2,
    };
  }
  const size = g.graph();
  return { width: size.width ?? 0, height: size.height ?? 0 };
}
