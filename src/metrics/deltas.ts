/**
 * What a flush sends: for a counter's or a histogram's series, what it grew by since the
 * last flush that committed (the row adds it up); for a gauge, its reading. Sending growth
 * rather than totals is what lets a process whose rows were folded into the `gone` row
 * (it stopped flushing for a while, store/metrics/flush.ts) flush again without counting
 * twice: its next flush starts fresh rows with only what came after.
 * Invariant: the sum of what committed flushes sent of a series equals the series' value
 * at the last committed flush; an unsent or failed flush leaves the growth for the next.
 */
import type { Registry } from "prom-client";

/** A family as `getMetricsAsJSON` gives it (prom-client does not export this shape). */
export interface FamilyJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

export type SeriesKind = "counter" | "histogram" | "gauge";

export interface SeriesValue {
  family: string;
  name: string;
  /** The labels as JSON with sorted keys: the series' identity in `metric_series`. */
  labels: string;
  kind: SeriesKind;
  value: number;
}

/** The labels as JSON with sorted keys (values as text, as Prometheus has them). */
export function labelKey(labels: Readonly<Record<string, string | number | undefined>>): string {
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(labels).sort()) {
    const v = labels[k];
    if (v !== undefined) sorted[k] = String(v);
  }
  return JSON.stringify(sorted);
}

function kindOf(type: string): SeriesKind | null {
  if (type === "counter" || type === "histogram" || type === "gauge") return type;
  return null;
}

/** Every series of the registry now, flattened (a histogram's buckets, sum and count apart). */
export async function readSeries(registry: Registry): Promise<SeriesValue[]> {
  const families = (await registry.getMetricsAsJSON()) as unknown as FamilyJson[];
  const out: SeriesValue[] = [];
  for (const f of families) {
    const kind = kindOf(String(f.type));
    // A summary has no sum over processes; `omit`: a per-process fact (its start time).
    if (!kind || f.aggregator === "omit") continue;
    for (const v of f.values) {
      if (!Number.isFinite(v.value)) continue;
      out.push({
        family: f.name,
        name: v.metricName ?? f.name,
        labels: labelKey(v.labels),
        kind,
        value: v.value,
      });
    }
  }
  return out;
}

const keyOf = (s: Pick<SeriesValue, "name" | "labels">) => `${s.name}\u0000${s.labels}`;

/** The growth since the last committed flush, one book per process. */
export class FlushBook {
  private readonly sent = new Map<string, number>();

  /** What to send now: the gauges, and the counters and histograms that grew. */
  pending(now: readonly SeriesValue[]): SeriesValue[] {
    const out: SeriesValue[] = [];
    for (const s of now) {
      if (s.kind === "gauge") {
        out.push(s);
        continue;
      }
      const before = this.sent.get(keyOf(s)) ?? 0;
      // Lower than sent: the series was reset (a test's registry), and counts from zero.
      const grew = s.value >= before ? s.value - before : s.value;
      if (grew !== 0) out.push({ ...s, value: grew });
    }
    return out;
  }

  /** The flush of `now` committed: its values are the new baseline. */
  committed(now: readonly SeriesValue[]): void {
    for (const s of now) if (s.kind !== "gauge") this.sent.set(keyOf(s), s.value);
  }
}
