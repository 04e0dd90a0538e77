"use client";
/**
 * The side panel for the block selected in the graph: its id (renaming it renames every
 * `next` naming it), what is wrong with it, and the block's form (`BlockForm`), whose
 * edits replace the block in the definition, keeping its id and links.
 */
import { useEffect, useState } from "react";
import { BlockForm } from "./block-form";
import { type RenameOutcome, renameBlock, replaceBlock } from "./graph-edit";
import type { WorkflowRef } from "./use-workflow-list";

const REFUSED: Record<Exclude<RenameOutcome, { ok: true }>["reason"], string> = {
  invalid: "An id starts with a small letter, then small letters, digits or _ (at most 63).",
  taken: "Another block has that id.",
  missing: "The block is gone.",
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

export function SelectedBlock(props: {
  definition: unknown;
  index: number;
  messages: readonly string[];
  inputNames: string[];
  workflows: WorkflowRef[];
  /** A new definition; `burstKey` joins a burst of typing in one field into one undo step. */
  onEdit: (definition: unknown, burstKey?: string) => void;
}) {
  const { definition, index, messages, inputNames, workflows, onEdit } = props;
  const blocks = isRecord(definition) && Array.isArray(definition.blocks) ? definition.blocks : [];
  const block = blocks[index];
  const id = isRecord(block) && typeof block.id === "string" ? block.id : "";
  const [draftId, setDraftId] = useState(id);
  const [refusal, setRefusal] = useState<string | null>(null);
  useEffect(() => {
    setDraftId(id);
    setRefusal(null);
  }, [id]);
  if (!isRecord(block)) return null;
  const blockIds = blocks.flatMap((b) => (isRecord(b) && typeof b.id === "string" ? [b.id] : []));

  const rename = () => {
    if (draftId === id) return;
    const r = renameBlock(definition, id, draftId.trim());
    if (r.ok) onEdit(r.definition);
    else setRefusal(REFUSED[r.reason]);
  };

  return (
    <section className="card wf-selected" data-testid="selected-block" data-draft-undo="">
      <div className="wf-side-head">
        <h2>Block</h2>
        <span className="kind">{typeof block.type === "string" ? block.type : "no type"}</span>
      </div>
      <div className="field">
        <label htmlFor="wf-block-id">Id</label>
        <input
          id="wf-block-id"
          className={`input mono${refusal ? " invalid" : ""}`}
          data-testid="selected-block-id"
          value={draftId}
          onChange={(e) => {
            setDraftId(e.target.value);
            setRefusal(null);
          }}
          onBlur={rename}
          onKeyDown={(e) => {
            if (e.key === "Enter") rename();
          }}
        />
        {refusal && <span className="field-error">{refusal}</span>}
      </div>
      {messages.length > 0 && (
        <ul className="wf-graph-problems" data-testid="selected-block-problems">
          {messages.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
      <BlockForm
        block={block}
        blockIds={blockIds}
        inputNames={inputNames}
        workflows={workflows}
        onChange={(next) => {
          const edited = replaceBlock(definition, index, next);
          if (edited) onEdit(edited, `form:${index}`);
        }}
      />
    </section>
  );
}
