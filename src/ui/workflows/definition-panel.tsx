"use client";
/**
 * The main panel of the workflow editor: the name field and the definition as JSON text,
 * with its status line (valid, or where the syntax error is), Format, and the issues
 * from the last save, each of which finds its place in the text.
 */
import type { RefObject } from "react";
import type { Issue } from "../api";
import { CodeEditor, revealSpan } from "./code-editor";
import { plural } from "./format";
import { pathLabel } from "./graph";
import { DEF, type WorkflowDraft } from "./use-workflow-draft";

export function DefinitionPanel(props: {
  draft: WorkflowDraft;
  textarea: RefObject<HTMLTextAreaElement | null>;
  nameIssues: readonly Issue[];
  defIssues: readonly Issue[];
  /** Lines of the text an issue from the last save points at. */
  issueLines: ReadonlySet<number>;
  blockIds: readonly string[];
  onCaret: (offset: number) => void;
  onFormat: () => void;
  /** Selects what an issue path names in the text. */
  reveal: (issuePath: string, prefix: string) => void;
}) {
  const {
    draft,
    textarea,
    nameIssues,
    defIssues,
    issueLines,
    blockIds,
    onCaret,
    onFormat,
    reveal,
  } = props;
  const { save, trimmedName, name, setName, text, setText, parsed, current } = draft;
  return (
    <section className="card wf-main">
      <form
        className="field"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label htmlFor="wf-name">Name</label>
        <input
          id="wf-name"
          className={`input${trimmedName === "" || nameIssues.length > 0 ? " invalid" : ""}`}
          value={name}
          maxLength={200}
          onChange={(e) => setName(e.target.value)}
          placeholder="e.g. Classify company size"
        />
        {trimmedName === "" && <span className="field-error">A workflow needs a name.</span>}
        {nameIssues.map((i) => (
          <span key={i.message} className="field-error">
            {i.message}
          </span>
        ))}
      </form>

      <div className="field wf-definition">
        <div className="wf-definition-head">
          <label htmlFor="wf-definition">Definition (JSON)</label>
          <span className="muted wf-keys">
            Tab indents · Esc leaves the editor · Ctrl/⌘+S saves
          </span>
        </div>
        <CodeEditor
          value={text}
          onChange={setText}
          textareaRef={textarea}
          errorLine={parsed.ok ? null : parsed.error.line}
          issueLines={issueLines}
          onCaret={onCaret}
          invalid={!parsed.ok}
          label="Workflow definition (JSON)"
          describedBy="wf-definition-status"
        />
        <div className="wf-status-line" id="wf-definition-status">
          {parsed.ok ? (
            <span className="muted">
              Valid JSON · {plural(current?.blocks.length ?? 0, "block")} ·{" "}
              {plural(current?.inputs.length ?? 0, "input")}
            </span>
          ) : (
            <span className="field-error" role="alert">
              Line {parsed.error.line}, column {parsed.error.column}: {parsed.error.message}
            </span>
          )}
          <div className="spacer" />
          {!parsed.ok && (
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                if (textarea.current)
                  revealSpan(textarea.current, {
                    start: parsed.error.offset,
                    end: parsed.error.offset,
                  });
              }}
            >
              Go to error
            </button>
          )}
          <button type="button" className="btn btn-small" disabled={!parsed.ok} onClick={onFormat}>
            Format
          </button>
        </div>

        {defIssues.length > 0 && (
          <div className="wf-issues" role="alert">
            <div className="wf-issues-title">
              {plural(defIssues.length, "issue")} from the last save
              {parsed.ok ? " — click one to find it in the text" : ""}
            </div>
            <ul>
              {defIssues.map((i) => (
                <li key={`${i.path}\u0000${i.message}`}>
                  <button
                    type="button"
                    className="wf-issue"
                    disabled={!parsed.ok}
                    onClick={() => reveal(i.path, DEF)}
                  >
                    <code>{pathLabel(i.path, blockIds, DEF)}</code>
                    <span>{i.message}</span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </section>
  );
}
