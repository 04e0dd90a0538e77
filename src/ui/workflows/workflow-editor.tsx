"use client";
/**
 * The workflow editor: the graph is the editor (a palette adds blocks, dragging handles
 * connects them, a selected edge or block is deleted, the selected block's form edits
 * it), with undo and redo; the definition as JSON stays as an advanced view, in sync both
 * ways (`use-workflow-draft` holds the definition and its text together). Problems show
 * on the blocks and under the graph: no entry or several, a `next` to no block, a cycle,
 * a workflow id the workspace does not have. Save, Deploy, the try panel, the version
 * history and "Use in a table…" sit around it. Unsaved changes are marked, and leaving
 * the page with them asks first. Opened with `?block=<id>` (from a failed cell), that
 * block is highlighted.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { BlockType } from "@/contracts/workflow";
import { BlockGraph, type GraphEdits } from "./block-graph";
import { canAddBlock } from "./block-help";
import { BlocksPanel } from "./blocks-panel";
import { revealSpan } from "./code-editor";
import { DefinitionPanel } from "./definition-panel";
import { blockAtOffset, blockIndexOfPath } from "./graph";
import { addBlock, connect, deleteBlock, disconnect, reconnect } from "./graph-edit";
import { graphProblems } from "./graph-problems";
import { GraphToolbar } from "./graph-toolbar";
import { HistoryPanel } from "./history-panel";
import { lineColumn, spanOfPath } from "./json-text";
import { SelectedBlock } from "./selected-block";
import { type BlockRun, TryPanel } from "./try-panel";
import { UseInTable } from "./use-in-table";
import { DEF, useWorkflowDraft } from "./use-workflow-draft";
import { useWorkflowList } from "./use-workflow-list";
import { WorkflowHead, WorkflowLoadState } from "./workflow-head";

const EMPTY_MESSAGES: readonly string[] = [];

export function WorkflowEditor({ id, highlight }: { id: string; highlight: string | null }) {
  const draft = useWorkflowDraft(id);
  const { load, text, issues, error, notice, setNotice, parsed, current, summary } = draft;
  const { definition, edit } = draft;
  const [selected, setSelected] = useState<number | null>(null);
  const [results, setResults] = useState<Record<string, BlockRun> | null>(null);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const workflows = useWorkflowList();

  const nameIssues = useMemo(() => issues.filter((i) => i.path === "name"), [issues]);
  const defIssues = useMemo(() => issues.filter((i) => i.path !== "name"), [issues]);
  const blockIds = useMemo(() => summary?.blocks.map((b) => b.id) ?? [], [summary]);
  const inputNames = useMemo(() => summary?.inputs.map((i) => i.name) ?? [], [summary]);
  const problems = useMemo(
    () => (current ? graphProblems(current, definition, workflows.ids) : null),
    [current, definition, workflows.ids],
  );

  const issueLines = useMemo(() => {
    const lines = new Set<number>();
    if (!parsed.ok) return lines;
    for (const i of defIssues) {
      const span = spanOfPath(parsed.spans, i.path, DEF);
      if (span) lines.add(lineColumn(text, span.start).line);
    }
    return lines;
  }, [parsed, defIssues, text]);

  /** What is wrong with each block: the checks' problems and the last save's issues. */
  const issueMessages = useMemo(() => {
    const out = new Map<number, string[]>();
    for (const [index, list] of problems?.byBlock ?? []) out.set(index, [...list]);
    for (const i of defIssues) {
      const index = blockIndexOfPath(i.path, DEF);
      if (index === null) continue;
      const list = out.get(index) ?? [];
      if (!list.includes(i.message)) list.push(i.message);
      out.set(index, list);
    }
    return out;
  }, [problems, defIssues]);
  const issueCounts = useMemo(
    () => new Map([...issueMessages].map(([index, list]) => [index, list.length])),
    [issueMessages],
  );

  /** Selects what a path names in the text (its nearest existing parent otherwise). */
  const reveal = (issuePath: string, prefix: string, focus = true) => {
    const index = blockIndexOfPath(issuePath, prefix);
    if (index !== null) setSelected(index);
    if (!parsed.ok || !textarea.current) return;
    const span = spanOfPath(parsed.spans, issuePath, prefix);
    if (span) revealSpan(textarea.current, span, focus);
  };

  const format = () => {
    if (parsed.ok) edit(parsed.value);
  };

  const onAdd = (type: BlockType) => {
    const added = addBlock(definition, type);
    if (!added) return;
    edit(added.definition);
    const blocks = added.definition.blocks;
    setSelected(Array.isArray(blocks) ? blocks.length - 1 : null);
    setNotice(
      `Added block “${added.id}”. Drag from another block's lower edge to it to connect it, or it is a second entry.`,
    );
  };

  const apply = (next: unknown) => {
    if (next !== null) edit(next);
  };
  const edits: GraphEdits = {
    connect: (e) => apply(connect(definition, e.source, e.port, e.target)),
    disconnect: (e) => apply(disconnect(definition, e.source, e.port, e.target)),
    reconnect: (from, to) => apply(reconnect(definition, from, to)),
    deleteBlock: (blockId) => {
      setSelected(null);
      apply(deleteBlock(definition, blockId));
    },
  };

  // The block the page was opened for starts selected, in the list as in the graph.
  const highlightIndex = current?.blocks.find((b) => b.id === highlight)?.index ?? null;
  const highlighted = useRef(false);
  useEffect(() => {
    if (highlighted.current || highlightIndex === null) return;
    highlighted.current = true;
    setSelected(highlightIndex);
  }, [highlightIndex]);

  // A selection past the last block (after an undo removed it) is no selection.
  const blockCount = current?.blocks.length ?? 0;
  useEffect(() => {
    if (selected !== null && current && selected >= blockCount) setSelected(null);
  }, [selected, current, blockCount]);

  const onCaret = (offset: number) => {
    if (parsed.ok && current)
      setSelected(blockAtOffset(parsed.spans, current.blocks.length, offset));
  };

  if (load.state !== "ready") return <WorkflowLoadState load={load} onRetry={draft.retry} />;

  return (
    <>
      <WorkflowHead draft={draft} />

      {notice && (
        <div className="notice notice-ok" role="status">
          {notice}
        </div>
      )}
      {error && (
        <div className="notice notice-error" role="alert">
          {error}
          {defIssues.length > 0 ? " — see the issues under the definition." : ""}
        </div>
      )}

      <GraphToolbar
        canAdd={parsed.ok && canAddBlock(definition)}
        onAdd={onAdd}
        canUndo={draft.canUndo}
        canRedo={draft.canRedo}
        onUndo={draft.undo}
        onRedo={draft.redo}
      />
      <div className="wf-build">
        {summary && (
          <BlockGraph
            summary={summary}
            stale={draft.stale}
            selected={selected}
            issueMessages={issueMessages}
            problems={problems?.all ?? []}
            entry={problems?.entry ?? { kind: "one", id: "" }}
            highlight={highlight}
            results={results}
            onSelect={(index) => {
              if (index === null) setSelected(null);
              else reveal(`blocks.${index}`, "", false);
            }}
            edits={edits}
          />
        )}
        <div className="wf-build-side">
          {(selected === null || draft.stale) && (
            <p className="card muted wf-select-hint">
              Select a block in the graph to edit it; add blocks from the palette above.
            </p>
          )}
          {selected !== null && !draft.stale && (
            <SelectedBlock
              definition={definition}
              index={selected}
              messages={issueMessages.get(selected) ?? EMPTY_MESSAGES}
              inputNames={inputNames}
              workflows={workflows.workflows}
              onEdit={edit}
            />
          )}
          <TryPanel
            workflowId={id}
            definition={definition}
            dirty={draft.dirty}
            inputNames={inputNames}
            onResults={setResults}
          />
        </div>
      </div>

      <HistoryPanel
        workflowId={id}
        draft={definition}
        deployedVersion={draft.deployedVersion}
        onDeployed={draft.setDeployedVersion}
      />
      <UseInTable workflowId={id} workflowName={draft.trimmedName} definition={definition} />

      <details className="wf-advanced" open>
        <summary>Advanced: JSON</summary>
        <div className="wf-layout">
          <DefinitionPanel
            draft={draft}
            textarea={textarea}
            nameIssues={nameIssues}
            defIssues={defIssues}
            issueLines={issueLines}
            blockIds={blockIds}
            onCaret={onCaret}
            onFormat={format}
            reveal={reveal}
          />

          <BlocksPanel
            draft={draft}
            selected={selected}
            issueCounts={issueCounts}
            blockIds={blockIds}
            addBlock={onAdd}
            reveal={reveal}
          />
        </div>
      </details>
    </>
  );
}
