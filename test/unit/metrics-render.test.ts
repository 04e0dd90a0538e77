/**
 * The scrape's text (src/metrics/render.ts) read back by the tests' parser: what a process
 * counted survives the trip through `readSeries` (what a flush sends) and the renderer —
 * label values with quotes, backslashes and line breaks included, a histogram's buckets
 * in order with its sum and count, a gauge by its family's aggregator — and the engine's
 * families are declared before anything was counted.
 */
import { describe, expect, it } from "vitest";
import { readSeries } from "@/metrics/deltas";
import { METRIC, Metrics } from "@/metrics/registry";
import { renderMetrics, type SummedSeries } from "@/metrics/render";
import { parseExposition } from "../helpers/prom-text";

/** As the scrape's read sums one process's flush. */
async function summedOf(metrics: Metrics): Promise<SummedSeries[]> {
  return (await readSeries(metrics.registry)).map((s) => ({
    ...s,
    sum: s.value,
    max: s.value,
    min: s.value,
    avg: s.value,
  }));
}

describe("the scrape's text", () => {
  it("reads back what was counted, odd label values and histograms included", async () => {
    const m = new Metrics();
    const odd = 'llm:we"ird\\model\nx';
    m.charged(odd, 2.5);
    m.providerCall("http_get", "found");
    m.providerCall("http_get", "found");
    m.waited("http_get", 1_500);
    m.waited("http_get", 20);
    m.attemptEnded("workflow", "error", 0.2);
    const text = await renderMetrics(new Metrics(), await summedOf(m), {
      byStatus: { queued: 7, running: 2 },
    });
    const e = parseExposition(text);
    expect(e.value(METRIC.credits, { source: odd })).toBe(2.5);
    expect(e.value(METRIC.providerCalls, { provider: "http_get", outcome: "found" })).toBe(2);
    expect(e.value(`${METRIC.rateLimitWait}_count`, { provider: "http_get" })).toBe(2);
    expect(e.value(`${METRIC.rateLimitWait}_sum`)).toBeCloseTo(1.52);
    expect(e.value(`${METRIC.rateLimitWait}_bucket`, { le: "0.05" })).toBe(1);
    expect(e.value(`${METRIC.rateLimitWait}_bucket`, { le: "+Inf" })).toBe(2);
    expect(e.value(`${METRIC.cellDuration}_count`, { kind: "workflow", end: "error" })).toBe(1);
    expect(e.value(METRIC.queueDepth)).toBe(7);
    expect(e.value(METRIC.cells, { status: "running" })).toBe(2);
    // Buckets by bound, +Inf last, then sum and count.
    const lines = e.samples
      .filter((s) => s.name.startsWith(METRIC.rateLimitWait))
      .map((s) => s.name.slice(METRIC.rateLimitWait.length) + (s.labels.le ?? ""));
    expect(lines.slice(-4)).toEqual(["_bucket60", "_bucket+Inf", "_sum", "_count"]);
    // Before any process flushed anything, every family is declared.
    const empty = parseExposition(await renderMetrics(new Metrics(), [], { byStatus: {} }));
    expect([...empty.types.keys()].sort()).toEqual(Object.values(METRIC).sort());
    expect(empty.types.get(METRIC.stampToRunning)).toBe("histogram");
  });

  it("takes a gauge by its family's aggregator: the event loop lag averaged, memory summed", async () => {
    const catalog = new Metrics({ processMetrics: true });
    const gauge = (family: string, values: number[]): SummedSeries => ({
      family,
      name: family,
      labels: "{}",
      kind: "gauge",
      sum: values.reduce((a, b) => a + b, 0),
      max: Math.max(...values),
      min: Math.min(...values),
      avg: values.reduce((a, b) => a + b, 0) / values.length,
    });
    const e = parseExposition(
      await renderMetrics(
        catalog,
        [
          gauge("nodejs_eventloop_lag_seconds", [0.01, 0.03]),
          gauge("process_resident_memory_bytes", [100, 300]),
        ],
        { byStatus: {} },
      ),
    );
    expect(e.value("nodejs_eventloop_lag_seconds")).toBeCloseTo(0.02);
    expect(e.value("process_resident_memory_bytes")).toBe(400);
  });
});
