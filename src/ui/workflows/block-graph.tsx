"use client";
/**
 * The workflow as a graph, and its editor (React Flow draws, dagre places: graph-layout.ts
 * maps the summary to both). Dragging from a block's output handle (a condition's `true`
 * or `false`) to another block connects them; dragging an edge's end moves it; a selected
 * edge or block is removed with Delete or the buttons. Each change is handed up as an
 * edit of the definition (graph-edit.ts), and the graph is laid out again from it, so
 * nodes are not dragged. The entry block is marked, and the graph says when there is none
 * or several; each block shows what is wrong with it and, after a try, its run. The block
 * the page was opened for (a cell's failing block) is highlighted, and brought on screen.
 */
import {
  Background,
  type Connection,
  Controls,
  MarkerType,
  ReactFlow,
  ReactFlowProvider,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import { useEffect, useMemo, useRef, useState } from "react";
import type { DefinitionSummary, Problem } from "./graph";
import type { Port } from "./graph-edit";
import { type GraphEdge, type GraphNode, graphPicture } from "./graph-layout";
import { BlockNodeView, MissingNodeView } from "./graph-nodes";
import type { EntryState } from "./graph-problems";
import type { BlockRun } from "./try-panel";

/** Below this, a block's text is too small to read: the highlighted block is centred instead. */
const MIN_LEGIBLE_ZOOM = 0.7;
const NODE_TYPES = { block: BlockNodeView, missing: MissingNodeView };
const EDGE_DEFAULTS = { markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };

/** An edge by what it joins: the source block's id, its port, the target's id. */
export interface EdgeEnds {
  source: string;
  port: Port;
  target: string;
}

export interface GraphEdits {
  connect: (ends: EdgeEnds) => void;
  disconnect: (ends: EdgeEnds) => void;
  reconnect: (from: EdgeEnds, to: EdgeEnds) => void;
  deleteBlock: (id: string) => void;
}

export interface BlockGraphProps {
  summary: DefinitionSummary;
  /** The text does not parse: this is the last good graph, and it cannot be edited. */
  stale: boolean;
  selected: number | null;
  /** What is wrong with each block, by index. */
  issueMessages: ReadonlyMap<number, readonly string[]>;
  /** Every problem of the definition, listed under the graph. */
  problems: readonly Problem[];
  entry: EntryState;
  /** The block id the page was opened for (`?block=`). */
  highlight: string | null;
  /** Each block's run in the last try, by block id. */
  results?: Record<string, BlockRun> | null;
  onSelect: (index: number | null) => void;
  edits: GraphEdits;
}

const portOf = (handle: string | null | undefined): Port =>
  handle === "true" || handle === "false" ? handle : null;

function Flow(props: BlockGraphProps) {
  const { summary, stale, selected, issueMessages, highlight, results, onSelect, edits } = props;
  const picture = useMemo(
    () => graphPicture(summary, { highlight, selected, issueMessages, results: results ?? null }),
    [summary, highlight, selected, issueMessages, results],
  );
  // An edit redraws the edges (their ids are positions): a selection does not carry over.
  const [edgeChoice, setEdgeChoice] = useState<{ of: DefinitionSummary; id: string } | null>(null);
  const selectedEdge = edgeChoice?.of === summary ? edgeChoice.id : null;
  const setSelectedEdge = (id: string | null) =>
    setEdgeChoice(id === null ? null : { of: summary, id });
  const edges = useMemo(
    () => picture.edges.map((e) => ({ ...e, selected: e.id === selectedEdge })),
    [picture, selectedEdge],
  );
  // Held in state and given back on each change, as React Flow wants: it measures the
  // nodes through these changes, and only measured nodes can be fitted to.
  const [nodes, setNodes, onNodesChange] = useNodesState<GraphNode>(picture.nodes);
  useEffect(() => setNodes(picture.nodes), [picture, setNodes]);
  const { fitView, setCenter } = useReactFlow<GraphNode>();
  const measured = useNodesInitialized();
  const frame = useRef<HTMLDivElement>(null);
  const fitted = useRef<string | null>(null);

  const blockIdOfNode = (nodeId: string): string | null => {
    const m = /^b(\d+)$/.exec(nodeId);
    return m?.[1] === undefined ? null : (summary.blocks[Number(m[1])]?.id ?? null);
  };
  const endsOf = (e: GraphEdge): EdgeEnds | null => {
    const source = blockIdOfNode(e.source);
    const target = e.target.startsWith("missing:")
      ? e.target.slice("missing:".length)
      : blockIdOfNode(e.target);
    if (source === null || target === null) return null;
    return { source, port: portOf(e.data?.port), target };
  };
  const endsOfConnection = (c: Connection): EdgeEnds | null => {
    const source = blockIdOfNode(c.source);
    const target = blockIdOfNode(c.target);
    if (source === null || target === null || source === target) return null;
    return { source, port: portOf(c.sourceHandle), target };
  };

  const removeSelected = () => {
    const edge = picture.edges.find((e) => e.id === selectedEdge);
    const ends = edge ? endsOf(edge) : null;
    if (ends) {
      edits.disconnect(ends);
      return;
    }
    const id = selected === null ? null : summary.blocks[selected]?.id;
    if (id) edits.deleteBlock(id);
  };

  // The view fits again when the shape changes, not when a name or expression does.
  const shape = picture.nodes.map((n) => `${n.id}@${n.position.x},${n.position.y}`).join(" ");
  const target = picture.nodes.find((n) => n.id === picture.highlightedNode);
  const targetX = target ? target.position.x + (target.width ?? 0) / 2 : null;
  const targetY = target ? target.position.y + (target.height ?? 0) / 2 : null;
  const { width, height } = picture;
  useEffect(() => {
    if (!measured || fitted.current === shape) return;
    const first = fitted.current === null;
    fitted.current = shape;
    const box = frame.current;
    const fitZoom = box ? Math.min(box.clientWidth / width, box.clientHeight / height) : 1;
    // The highlighted block is brought on screen once: the whole graph when it fits
    // legibly, else centred on the block at full size.
    if (first && targetX !== null && targetY !== null) {
      box?.scrollIntoView({ block: "center" });
      if (fitZoom < MIN_LEGIBLE_ZOOM) {
        void setCenter(targetX, targetY, { zoom: 1 });
        return;
      }
    }
    void fitView({ padding: 0.08, maxZoom: 1 });
  }, [measured, shape, width, height, targetX, targetY, fitView, setCenter]);

  const selectedId = selected === null ? null : (summary.blocks[selected]?.id ?? null);
  /** Delete is read on the frame: the keyboard goes there when something is selected in it. */
  const keysHere = () => {
    const box = frame.current;
    if (box && !box.contains(document.activeElement)) box.focus({ preventScroll: true });
  };
  // Delete also works when the keyboard is nowhere (on the page's body) after a click in
  // the graph: the frame's own handler covers the focus inside it.
  const removeRef = useRef(removeSelected);
  useEffect(() => {
    removeRef.current = stale ? () => {} : removeSelected;
  });
  useEffect(() => {
    // Only when the last click was in the graph: a click elsewhere leaves the keyboard on
    // the body too, and Backspace there must not delete the block still selected.
    let clickedHere = false;
    const onPointerDown = (e: PointerEvent) => {
      clickedHere = e.target instanceof Node && frame.current?.contains(e.target) === true;
    };
    const onKeyDown = (e: KeyboardEvent) => {
      if (e.key !== "Delete" && e.key !== "Backspace") return;
      if (!clickedHere || e.defaultPrevented || document.activeElement !== document.body) return;
      e.preventDefault();
      removeRef.current();
    };
    window.addEventListener("pointerdown", onPointerDown, true);
    window.addEventListener("keydown", onKeyDown);
    return () => {
      window.removeEventListener("pointerdown", onPointerDown, true);
      window.removeEventListener("keydown", onKeyDown);
    };
  }, []);
  return (
    <>
      <div className="wf-graph-tools">
        <button
          type="button"
          className="btn btn-small"
          data-testid="graph-delete-edge"
          disabled={stale || selectedEdge === null}
          onClick={removeSelected}
        >
          Delete connection
        </button>
        <button
          type="button"
          className="btn btn-small"
          data-testid="graph-delete-block"
          disabled={stale || selectedId === null || selectedId === ""}
          onClick={() => selectedId && edits.deleteBlock(selectedId)}
        >
          Delete block{selectedId ? ` “${selectedId}”` : ""}
        </button>
      </div>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: Delete reaches here from the focused edge or block. */}
      <div
        ref={frame}
        className={`wf-graph-frame${stale ? " stale" : ""}`}
        data-testid="workflow-graph"
        data-highlighted-node={picture.highlightedNode ?? ""}
        data-selected-edge={selectedEdge ?? ""}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (stale || (e.key !== "Delete" && e.key !== "Backspace")) return;
          if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement)
            return;
          e.preventDefault();
          removeSelected();
        }}
      >
        <ReactFlow<GraphNode, GraphEdge>
          nodes={nodes}
          edges={edges}
          onNodesChange={onNodesChange}
          nodeTypes={NODE_TYPES}
          defaultEdgeOptions={EDGE_DEFAULTS}
          nodesDraggable={false}
          nodesConnectable={!stale}
          edgesReconnectable={!stale}
          elementsSelectable={!stale}
          deleteKeyCode={null}
          zoomOnScroll={false}
          preventScrolling={false}
          minZoom={0.2}
          maxZoom={1.5}
          isValidConnection={(c) => {
            const source = blockIdOfNode(c.source);
            const t = blockIdOfNode(c.target);
            return source !== null && t !== null && source !== t;
          }}
          onConnect={(c) => {
            const ends = endsOfConnection(c);
            if (ends) edits.connect(ends);
          }}
          onReconnect={(old, c) => {
            const from = endsOf(old);
            const to = endsOfConnection(c);
            if (from && to) edits.reconnect(from, to);
          }}
          onNodeClick={(_, node) => {
            setSelectedEdge(null);
            keysHere();
            if (!stale && node.type === "block") onSelect(node.data.index);
          }}
          onEdgeClick={(_, edge) => {
            if (stale) return;
            setSelectedEdge(edge.id);
            keysHere();
            onSelect(null);
          }}
          onPaneClick={() => {
            setSelectedEdge(null);
            onSelect(null);
          }}
        >
          <Background gap={16} size={1} />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
    </>
  );
}

function EntryNotice({ entry }: { entry: EntryState }) {
  if (entry.kind === "one") return null;
  return (
    <div className="notice notice-warn" data-testid="graph-entry-problem" data-entry={entry.kind}>
      {entry.kind === "none"
        ? "No entry block: every block is the target of a “next”, so a cycle runs through them all. Remove a connection into the block that should start."
        : `${entry.ids.length} entry blocks (${entry.ids.join(", ")}): a workflow starts at one block. Connect the others from it.`}
    </div>
  );
}

export function BlockGraph(props: BlockGraphProps) {
  const { summary, stale, highlight, problems, entry } = props;
  const missingHighlight =
    highlight !== null && !summary.blocks.some((b) => b.id === highlight) ? highlight : null;
  return (
    <section className="card wf-graph" aria-label="Workflow graph">
      <div className="wf-side-head">
        <h2>Graph</h2>
        {stale ? (
          <span className="muted">as last valid — fix the JSON to edit it again</span>
        ) : (
          <span className="muted">
            Drag from a block's lower edge to another block to connect · click to select · Delete
            removes
          </span>
        )}
      </div>
      {missingHighlight !== null && (
        <div className="notice notice-warn" data-testid="graph-highlight-missing">
          This definition has no block “{missingHighlight}” to show.
        </div>
      )}
      {!stale && summary.blocks.length > 0 && <EntryNotice entry={entry} />}
      {summary.blocks.length === 0 ? (
        <p className="muted">No blocks yet: add one from the palette.</p>
      ) : (
        <ReactFlowProvider>
          <Flow {...props} />
        </ReactFlowProvider>
      )}
      {!stale && problems.length > 0 && (
        <ul className="wf-graph-problems" data-testid="graph-problems">
          {problems.map((p) => (
            <li key={`${p.path}\u0000${p.message}`}>{p.message}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
