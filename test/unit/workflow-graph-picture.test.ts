/**
 * The workflow graph as drawn, without a browser: from the editor's summary of a
 * definition, the nodes (blocks with id, type and name; the entry; joins; the highlighted
 * and selected block; issue counts), the edges (plain, fan-out, a condition's labelled
 * `true`/`false` ports, a `next` to no block drawn to a placeholder) and a layout that
 * reads top to bottom without overlaps.
 */
import { describe, expect, it } from "vitest";
import { describeDefinition } from "@/ui/workflows/graph";
import {
  type BlockNode,
  type GraphNode,
  graphPicture,
  NODE_HEIGHT,
  NODE_WIDTH,
} from "@/ui/workflows/graph-layout";

const DIAMOND = {
  inputs: [{ name: "n", type: "number" }],
  blocks: [
    {
      id: "double",
      type: "transform",
      name: "Double it",
      expression: "inputs.n * 2",
      next: "check",
    },
    {
      id: "check",
      type: "condition",
      expression: "blocks.double > 10",
      next: { true: "big", false: "small" },
    },
    { id: "big", type: "transform", expression: "'big'", next: "done" },
    { id: "small", type: "transform", expression: "'small'", next: ["done", "audit"] },
    { id: "audit", type: "wait", ms: 10 },
    { id: "done", type: "fail", message: "stop" },
  ],
};

const blockNode = (nodes: GraphNode[], id: string): BlockNode => {
  const n = nodes.find((x): x is BlockNode => x.type === "block" && x.data.blockId === id);
  if (!n) throw new Error(`no node for ${id}`);
  return n;
};

describe("graphPicture", () => {
  it("draws each block with its id, type and name, and marks the entry and the joins", () => {
    const { nodes } = graphPicture(describeDefinition(DIAMOND));
    expect(nodes.map((n) => n.type)).toEqual(Array(6).fill("block"));
    const double = blockNode(nodes, "double");
    expect(double.data).toMatchObject({
      type: "transform",
      name: "Double it",
      entry: true,
      join: false,
      end: null,
    });
    expect(nodes.filter((n) => n.type === "block" && n.data.entry).map((n) => n.id)).toEqual([
      double.id,
    ]);
    // "done" has two predecessors (big, small): a join. "audit" only one.
    expect(blockNode(nodes, "done").data).toMatchObject({ join: true, end: "fails" });
    expect(blockNode(nodes, "audit").data).toMatchObject({ join: false, end: "ends" });
    expect(blockNode(nodes, "check").data.detail).toBe("blocks.double > 10");
  });

  it("draws plain and fan-out edges unlabelled, a condition's ports labelled true and false", () => {
    const { nodes, edges } = graphPicture(describeDefinition(DIAMOND));
    const idOf = (id: string) => blockNode(nodes, id).id;
    const byEnds = edges.map((e) => [e.source, e.target, e.label ?? null]);
    expect(byEnds).toEqual([
      [idOf("double"), idOf("check"), null],
      [idOf("check"), idOf("big"), "true"],
      [idOf("check"), idOf("small"), "false"],
      [idOf("big"), idOf("done"), null],
      [idOf("small"), idOf("done"), null],
      [idOf("small"), idOf("audit"), null],
    ]);
    const trueEdge = edges[1];
    expect(trueEdge?.className).toContain("wf-gedge-true");
    expect(trueEdge?.data).toEqual({ port: "true", known: true });
    expect(trueEdge?.ariaLabel).toBe("check to big when true");
    expect(new Set(edges.map((e) => e.id)).size).toBe(edges.length);
  });

  it("lays the graph out top to bottom: each edge goes down, and no two nodes overlap", () => {
    const { nodes, edges, width, height } = graphPicture(describeDefinition(DIAMOND));
    const at = new Map(nodes.map((n) => [n.id, n.position]));
    for (const e of edges) expect(at.get(e.target)?.y).toBeGreaterThan(at.get(e.source)?.y ?? 0);
    for (const a of nodes)
      for (const b of nodes) {
        if (a === b) continue;
        const apart =
          Math.abs(a.position.x - b.position.x) >= NODE_WIDTH ||
          Math.abs(a.position.y - b.position.y) >= NODE_HEIGHT;
        expect(apart).toBe(true);
      }
    // The two branches of the condition sit side by side.
    expect(at.get(blockNode(nodes, "big").id)?.y).toBe(at.get(blockNode(nodes, "small").id)?.y);
    expect(width).toBeGreaterThan(NODE_WIDTH);
    expect(height).toBeGreaterThan(4 * NODE_HEIGHT);
  });

  it("highlights the block asked for, marks the selected one and counts issues per block", () => {
    const summary = describeDefinition(DIAMOND);
    const picture = graphPicture(summary, {
      highlight: "small",
      selected: 2,
      issueCounts: new Map([[3, 2]]),
    });
    const small = blockNode(picture.nodes, "small");
    expect(picture.highlightedNode).toBe(small.id);
    expect(small.data).toMatchObject({ highlighted: true, issues: 2, selected: false });
    expect(blockNode(picture.nodes, "big").data).toMatchObject({
      highlighted: false,
      selected: true,
    });
    expect(picture.nodes.filter((n) => n.type === "block" && n.data.highlighted)).toHaveLength(1);
    // A block id the definition no longer has highlights nothing.
    expect(graphPicture(summary, { highlight: "gone" }).highlightedNode).toBeNull();
  });

  it("gives each edge the handle it leaves from, the problems' messages and a try's runs to the blocks", () => {
    const summary = describeDefinition(DIAMOND);
    const run = { status: "completed" as const, output: 14, error: null, durationMs: 3 };
    const picture = graphPicture(summary, {
      issueMessages: new Map([[1, ["one", "two"]]]),
      results: { big: run },
    });
    for (const e of picture.edges) {
      expect(e.targetHandle).toBe("in");
      expect(e.sourceHandle).toBe(e.data?.port ?? "out");
    }
    const second = picture.nodes.find((n) => n.type === "block" && n.data.index === 1);
    expect(second?.data).toMatchObject({ issues: 2, messages: ["one", "two"] });
    expect(blockNode(picture.nodes, "big").data.result).toEqual(run);
    expect(blockNode(picture.nodes, "small").data.result).toBeNull();
    // Room for the run's line: the nodes are taller, and still apart.
    expect(blockNode(picture.nodes, "big").height).toBeGreaterThan(NODE_HEIGHT);
  });

  it("draws a `next` to no block to a marked placeholder, and survives duplicate and missing ids", () => {
    const summary = describeDefinition({
      blocks: [
        { id: "a", type: "transform", expression: "1", next: { true: "nope", false: "b" } },
        { id: "b", type: "transform", expression: "2", next: "nope" },
        { id: "b", type: "mystery" },
        { type: "transform" },
      ],
    });
    expect(summary.problems.length).toBeGreaterThan(0);
    const { nodes, edges } = graphPicture(summary);
    const missing = nodes.filter((n) => n.type === "missing");
    expect(missing.map((n) => n.data)).toEqual([{ target: "nope" }]);
    const toMissing = edges.filter((e) => e.target === missing[0]?.id);
    expect(toMissing.map((e) => [e.label ?? null, e.data?.known])).toEqual([
      ["true", false],
      [null, false],
    ]);
    expect(toMissing[0]?.className).toContain("wf-gedge-missing");
    // Every block has a node of its own, the duplicate and the id-less one included.
    expect(nodes.filter((n) => n.type === "block")).toHaveLength(4);
    expect(new Set(nodes.map((n) => n.id)).size).toBe(nodes.length);
    // "b" names the first block with that id.
    const firstB = blockNode(nodes, "b");
    expect(edges.find((e) => e.label === "false")?.target).toBe(firstB.id);
    for (const n of nodes) expect(Number.isFinite(n.position.x + n.position.y)).toBe(true);
  });

  it("draws a cycle and a self-loop without failing", () => {
    const summary = describeDefinition({
      blocks: [
        { id: "start", type: "transform", expression: "1", next: "x" },
        { id: "x", type: "transform", expression: "1", next: ["y", "x"] },
        { id: "y", type: "transform", expression: "1", next: "x" },
      ],
    });
    expect(summary.problems.some((p) => p.message.startsWith("cycle"))).toBe(true);
    const { nodes, edges } = graphPicture(summary);
    expect(nodes).toHaveLength(3);
    expect(edges).toHaveLength(4);
    expect(blockNode(nodes, "x").data.join).toBe(true);
  });

  it("draws nothing for a definition without blocks", () => {
    const picture = graphPicture(describeDefinition({ blocks: [] }));
    expect(picture.nodes).toEqual([]);
    expect(picture.edges).toEqual([]);
  });
});
