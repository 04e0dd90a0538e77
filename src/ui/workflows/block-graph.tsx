"use client";
/**
 * The workflow as a picture: the blocks the definition describes drawn as a graph (React
 * Flow draws, dagre places; graph-layout.ts maps the summary to both), following the
 * JSON as it is typed. The layout is derived, so nodes are not dragged; the view pans and
 * zooms, and fits itself again when the shape changes. Clicking a block finds it in the
 * text. The block the page was opened for (a cell's failing block) is highlighted, and
 * centred and scrolled into view once.
 */
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import { useEffect, useMemo, useRef } from "react";
import { plural } from "./format";
import type { DefinitionSummary } from "./graph";
import {
  type BlockNode,
  type GraphNode,
  graphPicture,
  type MissingNode,
  NODE_HEIGHT,
  NODE_WIDTH,
} from "./graph-layout";

function BlockNodeView({ data }: NodeProps<BlockNode>) {
  const classes = ["wf-gnode"];
  if (data.entry) classes.push("entry");
  if (data.highlighted) classes.push("highlighted");
  if (data.selected) classes.push("selected");
  if (data.issues > 0) classes.push("has-issues");
  return (
    <div
      className={classes.join(" ")}
      data-testid={`graph-node-${data.blockId}`}
      data-entry={data.entry}
      data-join={data.join}
      data-highlighted={data.highlighted}
      title={data.detail || undefined}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <div className="wf-gnode-head">
        <code className="wf-block-id">{data.blockId || "(no id)"}</code>
        <span className={`kind${data.knownType ? "" : " unknown"}`}>{data.type || "no type"}</span>
      </div>
      <div className="wf-gnode-name">{data.name ?? data.detail}</div>
      <div className="wf-gnode-tags">
        {data.entry && <span className="wf-entry">entry</span>}
        {data.join && <span className="kind join">join</span>}
        {data.end && <span className="wf-end">{data.end === "fails" ? "fails" : "ends"}</span>}
        {data.issues > 0 && <span className="wf-issue-count">{plural(data.issues, "issue")}</span>}
      </div>
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

function MissingNodeView({ data }: NodeProps<MissingNode>) {
  return (
    <div className="wf-gnode-missing" data-testid={`graph-missing-${data.target}`}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <code>{data.target}?</code> <span>no such block</span>
    </div>
  );
}

/** Below this, a block's text is too small to read: the highlighted block is centred instead. */
const MIN_LEGIBLE_ZOOM = 0.7;
const NODE_TYPES = { block: BlockNodeView, missing: MissingNodeView };
const EDGE_DEFAULTS = { markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };

export interface BlockGraphProps {
  summary: DefinitionSummary;
  /** The text does not parse: this is the last good graph. */
  stale: boolean;
  selected: number | null;
  issueCounts: ReadonlyMap<number, number>;
  /** The block id the page was opened for (`?block=`). */
  highlight: string | null;
  onSelect: (index: number) => void;
}

function Flow({ summary, stale, selected, issueCounts, highlight, onSelect }: BlockGraphProps) {
  const picture = useMemo(
    () => graphPicture(summary, { highlight, selected, issueCounts }),
    [summary, highlight, selected, issueCounts],
  );
  // Held in state and given back on each change, as React Flow wants: it measures the
  // nodes through these changes, and only measured nodes can be fitted to.
  const [nodes, setNodes, onNodesChange] = useNodesState<GraphNode>(picture.nodes);
  useEffect(() => setNodes(picture.nodes), [picture, setNodes]);
  const { fitView, setCenter } = useReactFlow<GraphNode>();
  const measured = useNodesInitialized();
  const frame = useRef<HTMLDivElement>(null);
  const fitted = useRef<string | null>(null);

  // The view fits again when the shape changes, not when a name or expression does.
  const shape = picture.nodes.map((n) => `${n.id}@${n.position.x},${n.position.y}`).join(" ");
  const target = picture.nodes.find((n) => n.id === picture.highlightedNode);
  const targetX = target ? target.position.x + NODE_WIDTH / 2 : null;
  const targetY = target ? target.position.y + NODE_HEIGHT / 2 : null;
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

  return (
    <div
      ref={frame}
      className={`wf-graph-frame${stale ? " stale" : ""}`}
      data-testid="workflow-graph"
      data-highlighted-node={picture.highlightedNode ?? ""}
    >
      <ReactFlow<GraphNode>
        nodes={nodes}
        edges={picture.edges}
        onNodesChange={onNodesChange}
        nodeTypes={NODE_TYPES}
        defaultEdgeOptions={EDGE_DEFAULTS}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        zoomOnScroll={false}
        preventScrolling={false}
        minZoom={0.2}
        maxZoom={1.5}
        onNodeClick={(_, node) => {
          if (!stale && node.type === "block") onSelect(node.data.index);
        }}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

export function BlockGraph(props: BlockGraphProps) {
  const { summary, stale, highlight } = props;
  const problems = stale ? [] : summary.problems;
  const missingHighlight =
    highlight !== null && !summary.blocks.some((b) => b.id === highlight) ? highlight : null;
  return (
    <section className="card wf-graph" aria-label="Workflow graph">
      <div className="wf-side-head">
        <h2>Graph</h2>
        {stale ? (
          <span className="muted">as last valid — fix the JSON to update</span>
        ) : (
          <span className="muted">Click a block to find it in the JSON · drag to pan</span>
        )}
      </div>
      {missingHighlight !== null && (
        <div className="notice notice-warn" data-testid="graph-highlight-missing">
          This definition has no block “{missingHighlight}” to show.
        </div>
      )}
      {summary.blocks.length === 0 ? (
        <p className="muted">No blocks to draw yet.</p>
      ) : (
        <ReactFlowProvider>
          <Flow {...props} />
        </ReactFlowProvider>
      )}
      {problems.length > 0 && (
        <ul className="wf-graph-problems" data-testid="graph-problems">
          {problems.map((p) => (
            <li key={`${p.path}\u0000${p.message}`}>{p.message}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
