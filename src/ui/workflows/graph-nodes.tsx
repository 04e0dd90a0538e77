"use client";
/**
 * How the graph draws a block and a `next` to no block. A block has an input handle on
 * top and its output below: one (`out`) for a plain `next`, or a condition's two ports
 * (`true` on the left, `false` on the right), each dragged to another block to connect.
 * It shows its id, type, name or summary, the entry mark, what is wrong with it (a badge
 * with the messages as its tooltip) and, after a try, its status, time and output.
 */
import { Handle, type NodeProps, Position } from "@xyflow/react";
import { plural } from "./format";
import type { BlockNode, MissingNode } from "./graph-layout";
import type { BlockRun } from "./try-panel";

function short(value: unknown, max = 60): string {
  let s: string;
  try {
    s = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function ResultLine({ blockId, run }: { blockId: string; run: BlockRun }) {
  const what = run.error !== null ? run.error : short(run.output);
  return (
    <div
      className={`wf-gnode-result ${run.status}`}
      data-testid={`graph-result-${blockId}`}
      data-status={run.status}
      title={run.error ?? short(run.output, 2000)}
    >
      <span className="wf-result-status">{run.status}</span>
      <span className="muted">{run.durationMs} ms</span>
      <span className="wf-result-value">{what}</span>
    </div>
  );
}

export function BlockNodeView({ data }: NodeProps<BlockNode>) {
  const classes = ["wf-gnode"];
  if (data.entry) classes.push("entry");
  if (data.highlighted) classes.push("highlighted");
  if (data.selected) classes.push("selected");
  if (data.issues > 0) classes.push("has-issues");
  const id = data.blockId;
  const tip = [data.detail, ...data.messages].filter((s) => s !== "").join("\n");
  return (
    <div
      className={classes.join(" ")}
      data-testid={`graph-node-${id}`}
      data-entry={data.entry}
      data-join={data.join}
      data-highlighted={data.highlighted}
      data-problems={data.issues}
      title={tip || undefined}
    >
      <Handle type="target" position={Position.Top} id="in" data-testid={`handle-${id}-in`} />
      <div className="wf-gnode-head">
        <code className="wf-block-id">{id || "(no id)"}</code>
        <span className={`kind${data.knownType ? "" : " unknown"}`}>{data.type || "no type"}</span>
      </div>
      <div className="wf-gnode-name">{data.name ?? data.detail}</div>
      <div className="wf-gnode-tags">
        {data.entry && <span className="wf-entry">entry</span>}
        {data.join && <span className="kind join">join</span>}
        {data.end && <span className="wf-end">{data.end === "fails" ? "fails" : "ends"}</span>}
        {data.issues > 0 && (
          <span
            className="wf-issue-count"
            data-testid={`graph-problem-${id}`}
            title={data.messages.join("\n") || undefined}
          >
            {plural(data.issues, "issue")}
          </span>
        )}
      </div>
      {data.result && <ResultLine blockId={id} run={data.result} />}
      {data.condition ? (
        <>
          <Handle
            type="source"
            position={Position.Bottom}
            id="true"
            className="wf-handle-true"
            style={{ left: "30%" }}
            title="true: drag to the block to run when the expression is true"
            data-testid={`handle-${id}-true`}
          />
          <Handle
            type="source"
            position={Position.Bottom}
            id="false"
            className="wf-handle-false"
            style={{ left: "70%" }}
            title="false: drag to the block to run when the expression is false"
            data-testid={`handle-${id}-false`}
          />
        </>
      ) : (
        <Handle
          type="source"
          position={Position.Bottom}
          id="out"
          title="Drag to the block to run next"
          data-testid={`handle-${id}-out`}
        />
      )}
    </div>
  );
}

export function MissingNodeView({ data }: NodeProps<MissingNode>) {
  return (
    <div className="wf-gnode-missing" data-testid={`graph-missing-${data.target}`}>
      <Handle type="target" position={Position.Top} id="in" isConnectable={false} />
      <code>{data.target}?</code> <span>no such block</span>
    </div>
  );
}
