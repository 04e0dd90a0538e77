"use client";
/**
 * The workflow editor: the name, the definition as JSON (syntax errors as you type, the
 * API's issues after Save, each pointing into the text), the block graph it describes,
 * Save, Deploy, and a reference of the block types. Unsaved changes are marked, and
 * leaving the page with them asks first. This module wires the pieces together: the
 * draft's state (`use-workflow-draft`), the head, the drawn graph, and the definition and
 * blocks panels. Opened with `?block=<id>` (from a failed cell), that block is highlighted.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { BlockType } from "@/contracts/workflow";
import { BlockGraph } from "./block-graph";
import { withBlockAdded } from "./block-help";
import { BlocksPanel } from "./blocks-panel";
import { replaceText, revealSpan } from "./code-editor";
import { DefinitionPanel } from "./definition-panel";
import { blockAtOffset, blockIndexOfPath } from "./graph";
import { HistoryPanel } from "./history-panel";
import { lineColumn, parseJsonText, spanOfPath } from "./json-text";
import { DEF, useWorkflowDraft } from "./use-workflow-draft";
import { WorkflowHead, WorkflowLoadState } from "./workflow-head";

export function WorkflowEditor({ id, highlight }: { id: string; highlight: string | null }) {
  const draft = useWorkflowDraft(id);
  const { load, text, setText, issues, error, notice, setNotice, parsed, current, summary } = draft;
  const [selected, setSelected] = useState<number | null>(null);
  const textarea = useRef<HTMLTextAreaElement>(null);

  const nameIssues = useMemo(() => issues.filter((i) => i.path === "name"), [issues]);
  const defIssues = useMemo(() => issues.filter((i) => i.path !== "name"), [issues]);
  const blockIds = useMemo(() => summary?.blocks.map((b) => b.id) ?? [], [summary]);

  const issueLines = useMemo(() => {
    const lines = new Set<number>();
    if (!parsed.ok) return lines;
    for (const i of defIssues) {
      const span = spanOfPath(parsed.spans, i.path, DEF);
      if (span) lines.add(lineColumn(text, span.start).line);
    }
    return lines;
  }, [parsed, defIssues, text]);

  const issueCounts = useMemo(() => {
    const counts = new Map<number, number>();
    const add = (index: number | null) => {
      if (index !== null) counts.set(index, (counts.get(index) ?? 0) + 1);
    };
    for (const i of defIssues) add(blockIndexOfPath(i.path, DEF));
    for (const p of current?.problems ?? []) add(blockIndexOfPath(p.path));
    return counts;
  }, [defIssues, current]);

  /** Selects what a path names in the text (its nearest existing parent otherwise). */
  const reveal = (issuePath: string, prefix: string) => {
    const index = blockIndexOfPath(issuePath, prefix);
    if (index !== null) setSelected(index);
    if (!parsed.ok || !textarea.current) return;
    const span = spanOfPath(parsed.spans, issuePath, prefix);
    if (span) revealSpan(textarea.current, span);
  };

  const format = () => {
    if (!parsed.ok || !textarea.current) return;
    replaceText(textarea.current, JSON.stringify(parsed.value, null, 2), setText);
  };

  const addBlock = (type: BlockType) => {
    if (!parsed.ok || !textarea.current) return;
    const added = withBlockAdded(parsed.value, type);
    if (!added) return;
    const next = JSON.stringify(added.definition, null, 2);
    replaceText(textarea.current, next, setText);
    const after = parseJsonText(next);
    const index = Array.isArray(added.definition.blocks) ? added.definition.blocks.length - 1 : -1;
    const span = after.ok ? after.spans.get(`blocks.${index}`) : undefined;
    if (span) revealSpan(textarea.current, span);
    setSelected(index);
    setNotice(
      `Added block “${added.id}”. Point a "next" at it from another block, or it becomes a second entry.`,
    );
  };

  // The block the page was opened for starts selected, in the list as in the graph.
  const highlightIndex = current?.blocks.find((b) => b.id === highlight)?.index ?? null;
  const highlighted = useRef(false);
  useEffect(() => {
    if (highlighted.current || highlightIndex === null) return;
    highlighted.current = true;
    setSelected(highlightIndex);
  }, [highlightIndex]);

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

      {summary && (
        <BlockGraph
          summary={summary}
          stale={draft.stale}
          selected={selected}
          issueCounts={issueCounts}
          highlight={highlight}
          onSelect={(index) => reveal(`blocks.${index}`, "")}
        />
      )}

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
          addBlock={addBlock}
          reveal={reveal}
        />
      </div>
      <HistoryPanel
        workflowId={id}
        draft={parsed.ok ? parsed.value : null}
        deployedVersion={draft.deployedVersion}
        onDeployed={(v) => setNotice(`Deployed version ${v}`)}
      />
    </>
  );
}
