"use client";
/** The blocks of the definition being edited: id, type, what each leads to, the entry. */
import type { BlockSummary, DefinitionSummary } from "./graph";

function Edges({
  block,
  onPick,
  disabled,
}: {
  block: BlockSummary;
  onPick: (id: string) => void;
  disabled: boolean;
}) {
  if (block.edges.length === 0) {
    return (
      <span className="wf-end">{block.type === "fail" ? "fails the run" : "ends the run"}</span>
    );
  }
  return (
    <>
      {block.edges.map((e) => (
        <span key={`${e.port ?? ""}:${e.target}`} className="wf-edge">
          {e.port !== null && <span className={`wf-port wf-port-${e.port}`}>{e.port}</span>}
          <span aria-hidden="true">→</span>
          {e.known ? (
            <button
              type="button"
              className="wf-target"
              disabled={disabled}
              onClick={() => onPick(e.target)}
              title={`Show block ${e.target}`}
            >
              {e.target}
            </button>
          ) : (
            <span className="wf-target missing" title="No block has this id">
              {e.target}?
            </span>
          )}
        </span>
      ))}
    </>
  );
}

export function BlockList({
  summary,
  selected,
  issueCounts,
  stale,
  onSelect,
}: {
  summary: DefinitionSummary;
  selected: number | null;
  /** Issues per block index, from the last save and the live checks. */
  issueCounts: ReadonlyMap<number, number>;
  /** The text does not parse: the list is the last good one, and cannot point into the text. */
  stale: boolean;
  onSelect: (index: number) => void;
}) {
  if (summary.blocks.length === 0) {
    return <p className="muted">No blocks yet. Add one from the reference below.</p>;
  }
  const pickId = (id: string) => {
    const target = summary.blocks.find((b) => b.id === id);
    if (target) onSelect(target.index);
  };
  return (
    <ol className={`wf-blocks${stale ? " stale" : ""}`}>
      {summary.blocks.map((b) => {
        const issues = issueCounts.get(b.index) ?? 0;
        return (
          <li
            key={b.index}
            className={`wf-block${selected === b.index ? " selected" : ""}${issues > 0 ? " has-issues" : ""}`}
          >
            <button
              type="button"
              className="wf-block-head"
              disabled={stale}
              onClick={() => onSelect(b.index)}
              title="Select this block in the editor"
            >
              <code className="wf-block-id">{b.id || "(no id)"}</code>
              <span className={`kind${b.knownType ? "" : " unknown"}`}>{b.type || "no type"}</span>
              {b.entry && <span className="wf-entry">entry</span>}
              {issues > 0 && (
                <span className="wf-issue-count">
                  {issues} issue{issues === 1 ? "" : "s"}
                </span>
              )}
            </button>
            {(b.name || b.detail) && (
              <div className="wf-block-detail">
                {b.name && <span className="wf-block-name">{b.name}</span>}
                {b.detail && <code>{b.detail}</code>}
              </div>
            )}
            <div className="wf-block-edges">
              <Edges block={b} onPick={pickId} disabled={stale} />
            </div>
          </li>
        );
      })}
    </ol>
  );
}
