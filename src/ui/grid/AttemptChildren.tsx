"use client";
/**
 * An attempt's child runs (sub-workflow calls, foreach items) in the cell's history: how
 * many ended how, and on demand each one with its block, item and error, so a failed or
 * stopped fan-out shows which items did what.
 */
import type { Schemas } from "@/client/cellflow-client";

type Attempt = Schemas["CellAttempt"];

export function AttemptChildren({ attempt }: { attempt: Attempt }) {
  if (attempt.childrenTotal === 0) return null;
  const counts = new Map<string, number>();
  for (const c of attempt.children) counts.set(c.status, (counts.get(c.status) ?? 0) + 1);
  const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  const more = attempt.childrenTotal - attempt.children.length;
  return (
    <details className="muted" data-testid="attempt-children">
      <summary>
        {attempt.childrenTotal} child run{attempt.childrenTotal === 1 ? "" : "s"}
        {/* The counts are of the listed ones: said so when some are not listed. */}
        {more > 0 ? `; of the first ${attempt.children.length} listed: ` : ": "}
        {summary}
      </summary>
      <ul>
        {attempt.children.map((c) => (
          <li key={c.id} data-testid="child-run" data-status={c.status} title={c.id}>
            <code>{c.blockId}</code>
            {c.index === null ? "" : `[${c.index}]`} → {c.workflowId}: {c.status}
            {c.error ? ` — ${c.error}` : ""}
          </li>
        ))}
      </ul>
    </details>
  );
}
