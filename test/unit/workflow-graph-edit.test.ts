/**
 * The workflow editor's graph edits and undo history without a browser: each edit gives
 * a new definition in the API's shapes (`next` a string for one, a list on fan-out, a
 * condition's true/false ports), never changes its argument, and what the API accepts
 * stays accepted; undo/redo walk back and forth one edit at a time, a burst of typing
 * being one step; the graph's problems land on the blocks they are about.
 */
import { describe, expect, it } from "vitest";
import { WorkflowDefinition } from "@/contracts/workflow";
import { checkWorkflowDefinition } from "@/domain/workflow-graph";
import {
  draftReducer,
  initialHistory,
  prettyJson,
  TYPING_BURST_MS,
  undoShortcut,
} from "@/ui/workflows/draft-history";
import { describeDefinition } from "@/ui/workflows/graph";
import {
  addBlock,
  connect,
  deleteBlock,
  disconnect,
  reconnect,
  renameBlock,
  replaceBlock,
} from "@/ui/workflows/graph-edit";
import { graphProblems, unknownWorkflowProblems } from "@/ui/workflows/graph-problems";

type Def = { inputs: unknown[]; blocks: Record<string, unknown>[] };

const base = (): Def => ({
  inputs: [],
  blocks: [
    { id: "a", type: "transform", expression: "1", next: "b" },
    { id: "b", type: "condition", expression: "true", next: { true: "c" } },
    { id: "c", type: "transform", expression: "2" },
  ],
});

const blocks = (d: unknown) => (d as Def).blocks;
const block = (d: unknown, id: string) => blocks(d).find((b) => b.id === id);

function accepted(d: unknown): void {
  const parsed = WorkflowDefinition.safeParse(d);
  expect(parsed.success).toBe(true);
  if (parsed.success) expect(checkWorkflowDefinition(parsed.data)).toEqual([]);
}

describe("graph edits", () => {
  it("adds a block of a type under a free id with the type's defaults", () => {
    const first = addBlock(base(), "transform");
    expect(first?.id).toBe("transform");
    const second = addBlock(first?.definition, "transform");
    expect(second?.id).toBe("transform_2");
    expect(block(second?.definition, "transform_2")).toMatchObject({ type: "transform" });
    expect(addBlock({ nothing: true }, "wait")).toBeNull();
  });

  it("connects with a string for one next and a list on fan-out, never twice", () => {
    const d = { inputs: [], blocks: [...base().blocks, { id: "d", type: "wait", ms: 1 }] };
    const fan = connect(d, "a", null, "d");
    expect(block(fan, "a")?.next).toEqual(["b", "d"]);
    expect(connect(fan, "a", null, "d")).toBeNull();
    expect(connect(d, "c", null, "d") && block(connect(d, "c", null, "d"), "c")?.next).toBe("d");
    expect(connect(d, "a", null, "a")).toBeNull();
    expect(connect(d, "a", null, "ghost")).toBeNull();
    // The argument is never changed.
    expect(d.blocks[0]?.next).toBe("b");
  });

  it("connects a condition's true and false ports, replacing what a port held", () => {
    const d = { inputs: [], blocks: [...base().blocks, { id: "d", type: "wait", ms: 1 }] };
    const both = connect(d, "b", "false", "d");
    expect(block(both, "b")?.next).toEqual({ true: "c", false: "d" });
    accepted(both);
    const moved = connect(both, "b", "true", "d");
    expect(block(moved, "b")?.next).toEqual({ true: "d", false: "d" });
  });

  it("disconnects an edge: a list of one becomes a string, none drops next", () => {
    const fan = connect(
      { inputs: [], blocks: [...base().blocks, { id: "d", type: "wait", ms: 1 }] },
      "a",
      null,
      "d",
    );
    const one = disconnect(fan, "a", null, "b");
    expect(block(one, "a")?.next).toBe("d");
    const none = disconnect(one, "a", null, "d");
    expect(block(none, "a") && "next" in (block(none, "a") ?? {})).toBe(false);
    expect(disconnect(none, "a", null, "d")).toBeNull();
    const port = disconnect(base(), "b", "true", "c");
    expect(block(port, "b")?.next).toEqual({});
    expect(disconnect(base(), "b", "false", "c")).toBeNull();
  });

  it("reconnects an edge's end as one edit", () => {
    const d = { inputs: [], blocks: [...base().blocks, { id: "d", type: "wait", ms: 1 }] };
    const r = reconnect(
      d,
      { source: "b", port: "true", target: "c" },
      { source: "b", port: "false", target: "c" },
    );
    expect(block(r, "b")?.next).toEqual({ false: "c" });
    // Moved onto a link that exists (a → b, a → c; a → b's end dropped on c): one link.
    const fan = connect(base(), "a", null, "c");
    const merged = reconnect(
      fan,
      { source: "a", port: null, target: "b" },
      { source: "a", port: null, target: "c" },
    );
    expect(block(merged, "a")?.next).toBe("c");
  });

  it("deletes a block and every next pointing at it", () => {
    const d = connect(
      { inputs: [], blocks: [...base().blocks, { id: "d", type: "wait", ms: 1 }] },
      "a",
      null,
      "c",
    );
    const gone = deleteBlock(d, "c");
    expect(blocks(gone).map((b) => b.id)).toEqual(["a", "b", "d"]);
    expect(block(gone, "a")?.next).toBe("b");
    expect(block(gone, "b")?.next).toEqual({});
    expect(deleteBlock(gone, "c")).toBeNull();
    expect(describeDefinition(gone).problems.filter((p) => p.message.includes('"c"'))).toEqual([]);
  });

  it("renames a block and the references to it; refuses an id taken or invalid", () => {
    const r = renameBlock(base(), "c", "done");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(block(r.definition, "b")?.next).toEqual({ true: "done" });
    accepted(r.definition);
    expect(renameBlock(base(), "c", "a")).toEqual({ ok: false, reason: "taken" });
    expect(renameBlock(base(), "c", "Bad id")).toEqual({ ok: false, reason: "invalid" });
    expect(renameBlock(base(), "zz", "yy")).toEqual({ ok: false, reason: "missing" });
  });

  it("replaces a block from a form, keeping its id and next", () => {
    const r = replaceBlock(base(), 0, { id: "x", type: "transform", expression: "3", next: "c" });
    expect(block(r, "a")).toEqual({ id: "a", type: "transform", expression: "3", next: "b" });
    expect(replaceBlock(base(), 9, {})).toBeNull();
  });
});

describe("undo history", () => {
  it("makes each graph edit a step, with the text rewritten as pretty JSON", () => {
    let h = initialHistory(base());
    const edited = connect(base(), "c", null, "a");
    h = draftReducer(h, { kind: "edit", definition: edited });
    expect(h.present.text).toBe(prettyJson(edited));
    expect(h.present.definition).toEqual(edited);
    h = draftReducer(h, { kind: "undo" });
    expect(h.present.definition).toEqual(base());
    h = draftReducer(h, { kind: "redo" });
    expect(h.present.definition).toEqual(edited);
    expect(draftReducer(h, { kind: "redo" })).toBe(h);
  });

  it("joins a burst of typing into one step and keeps the last good definition meanwhile", () => {
    let h = initialHistory(base());
    h = draftReducer(h, { kind: "type", text: "{", at: 1000 });
    expect(h.present.definition).toEqual(base());
    h = draftReducer(h, { kind: "type", text: '{"blocks": []}', at: 1200 });
    expect(h.present.definition).toEqual({ blocks: [] });
    expect(h.past).toHaveLength(1);
    h = draftReducer(h, { kind: "type", text: '{"blocks": [1]}', at: 1200 + TYPING_BURST_MS });
    expect(h.past).toHaveLength(2);
    h = draftReducer(draftReducer(h, { kind: "undo" }), { kind: "undo" });
    expect(h.present.definition).toEqual(base());
    expect(h.future).toHaveLength(2);
    // A new edit drops what could be redone.
    h = draftReducer(h, { kind: "edit", definition: { blocks: [] } });
    expect(h.future).toEqual([]);
  });

  it("joins typing in one form field into one step, not across fields", () => {
    let h = initialHistory(base());
    const expr = (e: string) => replaceBlock(base(), 0, { type: "transform", expression: e });
    h = draftReducer(h, { kind: "edit", definition: expr("1 +"), burst: { key: "a.expr", at: 0 } });
    h = draftReducer(h, {
      kind: "edit",
      definition: expr("1 + 2"),
      burst: { key: "a.expr", at: 10 },
    });
    expect(h.past).toHaveLength(1);
    h = draftReducer(h, { kind: "edit", definition: expr("3"), burst: { key: "a.name", at: 20 } });
    expect(h.past).toHaveLength(2);
    h = draftReducer(h, { kind: "edit", definition: base() });
    h = draftReducer(h, { kind: "edit", definition: expr("4") });
    expect(h.past).toHaveLength(4);
  });

  it("reads Ctrl/⌘+Z as undo and with Shift as redo", () => {
    const k = { metaKey: false, ctrlKey: true, altKey: false, shiftKey: false, key: "z" };
    expect(undoShortcut(k)).toBe("undo");
    expect(undoShortcut({ ...k, shiftKey: true, key: "Z" })).toBe("redo");
    expect(undoShortcut({ ...k, ctrlKey: false, metaKey: true })).toBe("undo");
    expect(undoShortcut({ ...k, altKey: true })).toBeNull();
    expect(undoShortcut({ ...k, ctrlKey: false })).toBeNull();
  });
});

describe("graph problems", () => {
  it("puts cycles, several entries and unknown workflow ids on their blocks", () => {
    const ring = {
      inputs: [],
      blocks: [
        { id: "a", type: "transform", expression: "1", next: "b" },
        { id: "b", type: "workflow", workflowId: "wf_gone", next: "a" },
      ],
    };
    const p = graphProblems(describeDefinition(ring), ring, new Set(["wf_here"]));
    expect(p.entry).toEqual({ kind: "none" });
    expect(p.byBlock.get(0)).toContain("in a cycle: a → b → a");
    expect(p.byBlock.get(1)).toContain('workflow "wf_gone" is not a workflow of this workspace');
    expect(unknownWorkflowProblems(ring, null)).toEqual([]);

    const two = {
      inputs: [],
      blocks: [
        { id: "a", type: "transform", expression: "1" },
        { id: "b", type: "transform", expression: "2" },
      ],
    };
    const q = graphProblems(describeDefinition(two), two, null);
    expect(q.entry).toEqual({ kind: "several", ids: ["a", "b"] });
    expect(q.byBlock.get(1)?.[0]).toContain("one of 2 entry blocks");
    const one = graphProblems(describeDefinition(base()), base(), new Set());
    expect(one.entry).toEqual({ kind: "one", id: "a" });
    expect(one.byBlock.size).toBe(0);
  });
});
