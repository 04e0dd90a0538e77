"use client";
/**
 * The side panel of the workflow editor: the inputs and blocks the definition describes
 * (as last valid while the JSON doesn't parse), the problems the API would refuse, and
 * the block reference with its "add" buttons.
 */
import type { BlockType } from "@/contracts/workflow";
import { canAddBlock } from "./block-help";
import { BlockList } from "./block-list";
import { BlockReference } from "./block-reference";
import { pathLabel } from "./graph";
import type { WorkflowDraft } from "./use-workflow-draft";

export function BlocksPanel(props: {
  draft: WorkflowDraft;
  selected: number | null;
  /** Block index → issues pointing into it (from the last save and from the checks). */
  issueCounts: ReadonlyMap<number, number>;
  blockIds: readonly string[];
  addBlock: (type: BlockType) => void;
  /** Selects what a path names in the text. */
  reveal: (issuePath: string, prefix: string) => void;
}) {
  const { selected, issueCounts, blockIds, addBlock, reveal } = props;
  const { stale, summary, parsed } = props.draft;
  return (
    <aside className="wf-side">
      <section className="card">
        <div className="wf-side-head">
          <h2>Blocks</h2>
          {stale && <span className="muted">as last valid — fix the JSON to update</span>}
        </div>
        {summary ? (
          <>
            <div className="wf-inputs">
              <span className="muted">Inputs:</span>{" "}
              {summary.inputs.length === 0 ? (
                <span className="empty">none</span>
              ) : (
                summary.inputs.map((inp) => (
                  <code key={inp.name} className="wf-input">
                    {inp.name}
                    <span className="type"> {inp.type}</span>
                    {inp.required && <span className="wf-req">required</span>}
                  </code>
                ))
              )}
            </div>
            <BlockList
              summary={summary}
              selected={selected}
              issueCounts={issueCounts}
              stale={stale}
              onSelect={(index) => reveal(`blocks.${index}`, "")}
            />
            {!stale && summary.problems.length > 0 && (
              <div className="notice notice-warn wf-checks">
                <div className="wf-issues-title">The API will refuse this:</div>
                <ul>
                  {summary.problems.map((p) => (
                    <li key={`${p.path}\u0000${p.message}`}>
                      <button type="button" className="wf-issue" onClick={() => reveal(p.path, "")}>
                        <code>{pathLabel(p.path, blockIds)}</code>
                        <span>{p.message}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </>
        ) : (
          <p className="muted">The blocks show here once the JSON parses.</p>
        )}
      </section>

      <section className="card">
        <h2>Block reference</h2>
        <BlockReference onAdd={addBlock} canAdd={parsed.ok && canAddBlock(parsed.value)} />
      </section>
    </aside>
  );
}
