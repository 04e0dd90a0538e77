"use client";
/**
 * A deployed version's definition against the draft, line by line (line-diff.ts): lines
 * only in the version marked −, lines only in the draft +, long unchanged runs folded.
 */
import { type ReactNode, useMemo } from "react";
import { plural } from "./format";
import { definitionDiff } from "./line-diff";

export function HistoryDiff(props: {
  version: number;
  definition: unknown;
  draft: unknown | null;
}): ReactNode {
  const { version, definition, draft } = props;
  const diff = useMemo(
    () => (draft === null ? null : definitionDiff(definition, draft)),
    [definition, draft],
  );
  if (!diff)
    return (
      <div className="notice notice-warn" data-testid="history-diff-unavailable">
        The draft’s JSON does not parse, so version {version} cannot be compared with it. Fix the
        JSON to see the differences.
      </div>
    );
  if (diff.added === 0 && diff.removed === 0)
    return (
      <p className="muted" data-testid="history-diff" data-changes="0">
        Version {version} is the same as the draft.
      </p>
    );
  return (
    <>
      <p className="history-diff-summary muted">
        <span className="history-removed-count">
          − {plural(diff.removed, "line")} only in v{version}
        </span>
        {" · "}
        <span className="history-added-count">
          + {plural(diff.added, "line")} only in the draft
        </span>
      </p>
      <pre
        className="history-diff"
        data-testid="history-diff"
        data-changes={diff.added + diff.removed}
      >
        {diff.rows.map((row, i) =>
          row.op === "skipped" ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions in a fixed diff
            <div key={i} className="history-line history-skipped">
              ⋯ {plural(row.count, "unchanged line")}
            </div>
          ) : (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are positions in a fixed diff
            <div key={i} className={`history-line history-${row.op}`} data-op={row.op}>
              <span className="history-sign" aria-hidden="true">
                {row.op === "added" ? "+" : row.op === "removed" ? "−" : " "}
              </span>
              {row.text}
            </div>
          ),
        )}
      </pre>
    </>
  );
}
