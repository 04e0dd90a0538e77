"use client";
/**
 * The AI column's prompt: a text area and the table's columns as chips that insert a
 * `{{Column}}` reference at the cursor; under it, the columns the prompt reads. What the
 * references become in the workflow is `ai-prompt.ts`'s business; here they stay as
 * people write them.
 */
import { useEffect, useRef } from "react";
import type { Column } from "@/contracts/table";
import { insertReference, promptReferences, referenceFor } from "./ai-prompt";
import { FieldHint } from "./editor-frame";

export function AiPromptEditor(props: {
  id: string;
  value: string;
  columns: readonly Column[];
  error?: string | undefined;
  onChange: (text: string) => void;
}) {
  const { id, value, columns, onChange } = props;
  const area = useRef<HTMLTextAreaElement>(null);
  /** Where the cursor goes once an inserted reference is in the text. */
  const cursor = useRef<number | null>(null);
  useEffect(() => {
    // `value` is here only to run after the text with the reference is rendered.
    void value;
    const at = cursor.current;
    if (at === null || !area.current) return;
    cursor.current = null;
    area.current.focus();
    area.current.setSelectionRange(at, at);
  }, [value]);

  const insert = (column: Column) => {
    const el = area.current;
    const start = el?.selectionStart ?? value.length;
    const end = el?.selectionEnd ?? start;
    const next = insertReference(value, start, end, column, columns);
    cursor.current = next.cursor;
    onChange(next.text);
  };
  const reads = promptReferences([value], columns).columns;

  return (
    <div className="field">
      <label htmlFor={id}>Prompt</label>
      <textarea
        ref={area}
        id={id}
        name="prompt"
        data-testid="ai-prompt"
        className={`input ai-prompt${props.error ? " invalid" : ""}`}
        rows={6}
        value={value}
        placeholder="e.g. Which industry is {{Company}} in? Answer in one or two words."
        onChange={(e) => onChange(e.target.value)}
      />
      <div className="ai-insert">
        <span className="editor-label">Insert a column:</span>
        {columns.length === 0 && <span className="muted">the table has no columns yet</span>}
        {columns.map((c) => {
          const ref = referenceFor(c, columns);
          return (
            <button
              key={c.id}
              type="button"
              className="chip ai-chip"
              data-testid={`ai-insert-${c.id}`}
              disabled={ref === null}
              title={
                ref === null
                  ? "Another column is named like this one: rename one to use it here"
                  : `Insert {{${ref}}}: the row's ${c.name}`
              }
              // Keeps the text area's selection: the reference goes where the cursor was.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => insert(c)}
            >
              {c.name}
            </button>
          );
        })}
      </div>
      <FieldHint
        error={props.error}
        help={
          reads.length > 0 ? (
            <span data-testid="ai-reads">
              Reads{" "}
              {reads.map((c) => (
                <span key={c.id} className="chip ai-read">{`{{${c.name}}}`}</span>
              ))}{" "}
              — rows where one of them is empty are skipped.
            </span>
          ) : (
            "Insert the columns the model should see; each row’s values go in their place."
          )
        }
      />
    </div>
  );
}
