/**
 * The Prometheus text of the deployment: the series every process flushed, summed over
 * the processes (a gauge by its family's own aggregator: the average of the event loop
 * lags, the sum of the memory), with the help and type of the families this code
 * registers, written by prom-client's own serializer (its escaping, its histogram order).
 */
import { AggregatorRegistry } from "prom-client";
import type { FamilyJson, SeriesKind } from "./deltas";
import { METRIC, type Metrics } from "./registry";

/** A series summed over the processes (store/metrics/read.ts). */
export interface SummedSeries {
  family: string;
  name: string;
  labels: string;
  kind: SeriesKind;
  sum: number;
  max: number;
  min: number;
  avg: number;
}

/** The cell counts of the whole deployment, off the progress counters. */
export interface CellTotals {
  byStatus: Record<string, number>;
}

function gaugeValue(s: SummedSeries, aggregator: string): number {
  if (aggregator === "max" || aggregator === "first") return s.max;
  if (aggregator === "min") return s.min;
  if (aggregator === "average") return s.avg;
  return s.sum;
}

/** The exposition text: the cell gauges, then every flushed family. */
export async function renderMetrics(
  catalog: Metrics,
  series: readonly SummedSeries[],
  cells: CellTotals,
): Promise<string> {
  const known = new Map(catalog.registry.getMetricsAsArray().map((m) => [m.name, m]));
  const families = new Map<string, FamilyJson>();
  families.set(METRIC.cells, {
    name: METRIC.cells,
    help: "Cells by status, all tables (the progress counters: folded base plus deltas)",
    type: "gauge",
    aggregator: "sum",
    values: Object.entries(cells.byStatus).map(([status, value]) => ({
      value,
      labels: { status },
    })),
  });
  families.set(METRIC.queueDepth, {
    name: METRIC.queueDepth,
    help: "Cells queued, all tables",
    type: "gauge",
    aggregator: "sum",
    values: [{ value: cells.byStatus.queued ?? 0, labels: {} }],
  });
  for (const s of series) {
    let family = families.get(s.family);
    if (!family) {
      const meta = known.get(s.family);
      family = {
        name: s.family,
        help: meta?.help ?? s.family,
        // A family this version does not register (another version's process): as it was.
        type: meta ? String(meta.type) : s.kind,
        aggregator: meta?.aggregator ?? "sum",
        values: [],
      };
      families.set(s.family, family);
    }
    const value = s.kind === "gauge" ? gaugeValue(s, family.aggregator) : s.sum;
    family.values.push({
      value,
      labels: JSON.parse(s.labels) as Record<string, string>,
      ...(s.name !== s.family ? { metricName: s.name } : {}),
    });
  }
  // The engine's families before anything happened to them too: declared, no samples yet.
  for (const m of known.values()) {
    if (m.name.startsWith("cellflow_") && !families.has(m.name))
      families.set(m.name, {
        name: m.name,
        help: m.help,
        type: String(m.type),
        aggregator: "sum",
        values: [],
      });
  }
  // Already one value per series: the aggregation only hands them to the serializer.
  const summed = [...families.values()].map((f) => ({
    ...f,
    values: f.type === "histogram" ? [...f.values].sort(histogramOrder) : f.values,
    aggregator: "first",
  }));
  return AggregatorRegistry.aggregate([summed]).metrics();
}

type Value = FamilyJson["values"][number];

const PART = ["_bucket", "_sum", "_count"];

/** A histogram's lines per label set: its buckets by bound (+Inf last), then its sum and count. */
function histogramOrder(a: Value, b: Value): number {
  const { le: leA, ...restA } = a.labels;
  const { le: leB, ...restB } = b.labels;
  const byLabels = JSON.stringify(restA).localeCompare(JSON.stringify(restB));
  if (byLabels !== 0) return byLabels;
  const part = (v: Value) => PART.findIndex((p) => v.metricName?.endsWith(p));
  const byPart = part(a) - part(b);
  if (byPart !== 0) return byPart;
  const bound = (le: string | number | undefined) => (le === "+Inf" ? Infinity : Number(le));
  return bound(leA) - bound(leB);
}

export const METRICS_CONTENT_TYPE = AggregatorRegistry.PROMETHEUS_CONTENT_TYPE;
