/** Runs test/helpers/pacer-child.ts processes and gathers what they granted. */
import { runReportingScript } from "./child-scripts";

export interface PacerResult {
  grants: number[];
  waits: number[];
}

export function runPacerProcess(env: Record<string, string>): Promise<PacerResult> {
  return runReportingScript<PacerResult>(
    "test/helpers/pacer-child.ts",
    { ...process.env, LOG_LEVEL: "silent", ...env },
    "pacer process",
  );
}

/** The most grants any `windowMs` span (half-open, sliding over the grants) holds. */
export function maxInAnyWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] ?? 0) - (sorted[lo] ?? 0) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** The most weight any `windowMs` span (half-open, sliding over the entries) holds. */
export function maxWeightInAnyWindow(
  entries: readonly { at: number; weight: number }[],
  windowMs: number,
): number {
  const sorted = [...entries].sort((a, b) => a.at - b.at);
  let best = 0;
  let sum = 0;
  let lo = 0;
  for (const e of sorted) {
    sum += e.weight;
    while (e.at - (sorted[lo]?.at ?? 0) >= windowMs) sum -= sorted[lo++]?.weight ?? 0;
    best = Math.max(best, sum);
  }
  return best;
}
