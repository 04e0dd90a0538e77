/**
 * The arithmetic and wording of a run's progress, pure so it is tested without a server:
 * done/total from the run's counts, the rate over a recent window, the ETA, the bar a
 * terminal redraws, the plain line a log gets, and how a finished run ends the command.
 * `done` counts cells that reached an end (completed, error, cancelled); `total` is what
 * the run stamped, or more when counts show more (the UI's progress line agrees).
 */
import type { Schemas } from "@/client/cellflow-client";
import { CELL_STATUSES, isTerminal } from "@/domain/statuses";
import { EXIT } from "./failure";

type Run = Pick<Schemas["RunView"], "stamped" | "stamping" | "counts">;

export interface Progress {
  done: number;
  total: number;
  errors: number;
  cancelled: number;
  /** Still stamping pages: the total will grow. */
  stamping: boolean;
}

export function progressOf(run: Run): Progress {
  const c = run.counts;
  let done = 0;
  let inFlight = 0;
  for (const status of CELL_STATUSES) {
    if (isTerminal(status)) done += c[status];
    else inFlight += c[status];
  }
  return {
    done,
    total: Math.max(run.stamped, done + inFlight),
    errors: c.error,
    cancelled: c.cancelled,
    stamping: run.stamping,
  };
}

/**
 * Cells per second over the last `windowMs`: from the oldest sample inside the window to
 * the newest. Null until two samples are at least a second apart (too early to say).
 */
export class RateMeter {
  private samples: { at: number; done: number }[] = [];

  constructor(private readonly windowMs = 10_000) {}

  add(at: number, done: number): void {
    this.samples.push({ at, done });
    // Keep one sample at or before the window's start, so the span stays the whole window.
    while (this.samples.length > 2 && (this.samples[1]?.at ?? at) <= at - this.windowMs)
      this.samples.shift();
  }

  rate(): number | null {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at - first.at < 1_000) return null;
    return Math.max(0, ((last.done - first.done) * 1000) / (last.at - first.at));
  }
}

/** Seconds left at `rate`; null when it cannot be told (no rate yet, or stalled). */
export function etaSeconds(p: Progress, rate: number | null): number | null {
  if (p.done >= p.total) return 0;
  if (rate === null || rate <= 0) return null;
  return Math.ceil((p.total - p.done) / rate);
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

const formatRate = (rate: number | null) =>
  rate === null ? "? cells/s" : `${rate < 10 ? rate.toFixed(1) : Math.round(rate)} cells/s`;

const percent = (p: Progress) => (p.total > 0 ? Math.floor((p.done / p.total) * 100) : 100);

function figures(p: Progress, rate: number | null): string[] {
  const eta = etaSeconds(p, rate);
  return [
    `${p.done}/${p.total}${p.stamping ? "+" : ""} done (${percent(p)}%)`,
    formatRate(rate),
    `${p.errors} error${p.errors === 1 ? "" : "s"}`,
    `ETA ${eta === null ? "?" : formatDuration(eta)}`,
  ];
}

/** The line a log gets every few seconds when stdout is not a terminal. */
export function plainLine(runId: string, p: Progress, rate: number | null): string {
  return `run ${runId}: ${figures(p, rate).join(", ")}`;
}

/** The terminal's bar, fitted to `columns` (the bar shrinks first, then goes). */
export function barLine(p: Progress, rate: number | null, columns: number): string {
  const text = figures(p, rate).join("  ");
  const room = columns - text.length - 4;
  if (room < 10) return text.slice(0, Math.max(0, columns - 1));
  const width = Math.min(30, room);
  const filled = p.total > 0 ? Math.floor((p.done / p.total) * width) : width;
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]  ${text}`;
}

export interface RunEnd {
  exit: 0 | 1;
  message: string;
  hint?: string;
}

/**
 * How following a run ends once it is no longer active. Completed is success even when
 * some cells ended in error (the run did all it was asked; the errors are the rows'
 * outcomes, and the line names them with how to re-run them). Halted and cancelled are
 * failures: the run stopped before its cells were done.
 */
export function runEnd(
  run: Pick<Schemas["RunView"], "id" | "status" | "haltReason" | "maxCredits" | "creditsUsed"> &
    Run,
  elapsedMs: number,
  rerun: string,
): RunEnd {
  const p = progressOf(run);
  const took = formatDuration(elapsedMs / 1000);
  const tally = `${p.done}/${p.total} done, ${p.errors} error${p.errors === 1 ? "" : "s"}`;
  switch (run.status) {
    case "completed":
      return p.errors > 0
        ? {
            exit: EXIT.ok,
            message: `run ${run.id} completed with errors: ${tally} in ${took}`,
            hint: `re-run the failed cells with: ${rerun} --mode failed`,
          }
        : { exit: EXIT.ok, message: `run ${run.id} completed: ${tally} in ${took}` };
    case "halted":
      return {
        exit: EXIT.api,
        message: `run ${run.id} halted: ${
          run.haltReason === "run_credit_cap"
            ? `its credit cap was reached (${run.creditsUsed ?? 0} of ${run.maxCredits ?? 0} credits)`
            : "the workspace's monthly credits ran out"
        }; ${tally}`,
      };
    case "cancelled":
      return {
        exit: EXIT.api,
        message: `run ${run.id} was stopped: ${p.cancelled} cells cancelled; ${tally}`,
      };
    default:
      return { exit: EXIT.ok, message: `run ${run.id} is still active` };
  }
}
