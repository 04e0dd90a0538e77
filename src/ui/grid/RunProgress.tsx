"use client";
/** One line per active (or just finished) run: done / total, rate, elapsed, and its end. */
import { useEffect, useRef, useState } from "react";
import type { RunView } from "./use-table-runs";

function elapsed(fromIso: string, toIso: string | null): string {
  const ms = (toIso ? Date.parse(toIso) : Date.now()) - Date.parse(fromIso);
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

function halted(r: RunView): string {
  if (r.haltReason === "run_credit_cap")
    return `halted: credit cap reached (${r.creditsUsed ?? 0} of ${r.maxCredits ?? 0} credits)`;
  return "halted (usage limit)";
}

const done = (r: RunView) => r.counts.completed + r.counts.error + r.counts.cancelled;

export function RunProgress({
  runs,
  groupNames,
}: {
  runs: RunView[];
  groupNames: Map<string, string>;
}) {
  // Rates from the change in done cells between refreshes, per run.
  const seen = useRef(new Map<string, { done: number; at: number; rate: number }>());
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 1_000);
    return () => clearInterval(t);
  }, []);
  const now = Date.now();
  const recent = runs.filter(
    (r) =>
      r.status === "active" || (r.finishedAt !== null && now - Date.parse(r.finishedAt) < 15_000),
  );
  if (recent.length === 0) return null;
  return (
    <div className="runs">
      {recent.map((r) => {
        const d = done(r);
        const total = Math.max(r.stamped, d + r.counts.queued + r.counts.running + r.counts.paused);
        const prev = seen.current.get(r.id);
        let rate = prev?.rate ?? 0;
        if (prev && d !== prev.done && now > prev.at)
          rate = ((d - prev.done) * 1000) / (now - prev.at);
        if (!prev || d !== prev.done) seen.current.set(r.id, { done: d, at: now, rate });
        const names = r.groupIds.map((g) => groupNames.get(g) ?? g).join(", ");
        return (
          <div className="run-line" key={r.id} data-testid="run-progress" data-status={r.status}>
            <strong>{names || "Run"}</strong>
            <span className="muted">
              {d.toLocaleString()} / {total.toLocaleString()}
              {r.stamping ? "+" : ""}
            </span>
            <div className="progress">
              <div style={{ width: `${total > 0 ? Math.round((d / total) * 100) : 0}%` }} />
            </div>
            {r.status === "active" ? (
              <span className="muted">{rate > 0 ? `${rate.toFixed(1)} cells/s` : "starting…"}</span>
            ) : (
              <span className="muted" data-testid="run-end" data-halt-reason={r.haltReason ?? ""}>
                {r.status === "halted" ? halted(r) : r.status}
              </span>
            )}
            {r.counts.error > 0 && <span className="status-error">{r.counts.error} errors</span>}
            <span className="muted">{elapsed(r.createdAt, r.finishedAt)}</span>
          </div>
        );
      })}
    </div>
  );
}
