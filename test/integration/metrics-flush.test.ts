/**
 * The arithmetic of the metrics flush (store/metrics/flush.ts) and of the scrape's sum
 * (store/metrics/read.ts), with processes played by separate sets of metrics flushing
 * into one database: the sum over processes; a flush sends growth, so flushing again
 * counts nothing twice; a process that stopped flushing keeps counting until its expiry
 * folds it into `gone` (its gauges gone with its heartbeat), and after; an expired process
 * that flushes again adds only what came after; a retired process's counts stay.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { METRIC, Metrics } from "@/metrics/registry";
import { startMetricsFlush } from "@/runtime/metrics-flush";
import { scrapeMetrics } from "@/services/metrics";
import { GONE_PROCESS } from "@/store/metrics/flush";
import { useTestDatabase } from "../helpers/db";
import { type Exposition, parseExposition } from "../helpers/prom-text";

const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
}, 60_000);

/** A process: its own metrics, flushed only when the test says (the timer is an hour). */
function playProcess(kind: "worker" | "trigger" = "worker") {
  const metrics = new Metrics();
  const flush = startMetricsFlush({
    db: db(),
    kind,
    log: log(),
    metrics,
    everyMs: 3_600_000,
    expireAfterMs: 60_000,
  });
  return { metrics, flush };
}

const scrape = async (): Promise<Exposition> => parseExposition(await scrapeMetrics(db()));
const calls = (m: Exposition) => m.value(METRIC.providerCalls);

/** Makes the process look as if its last flush was ten minutes ago. */
const age = (processId: string) =>
  db().execute(
    sql`update metric_series set flushed_at = now() - interval '10 minutes' where process_id = ${processId}`,
  );

const rowsOf = (processId: string) =>
  queryRows<{ name: string; value: number }>(
    db(),
    sql`select name, value from metric_series where process_id = ${processId} order by name, labels`,
  );

describe("the sum over processes", () => {
  it("sums, never counts a flush twice, survives expiry and a comeback, and keeps a retired process's counts", async () => {
    const a = playProcess();
    const b = playProcess("trigger");
    for (let i = 0; i < 3; i += 1) a.metrics.providerCall("p", "found");
    a.metrics.providerCall("p", "refused");
    b.metrics.providerCall("p", "found");
    b.metrics.providerCall("p", "found");
    a.metrics.claimed(0.3);
    b.metrics.claimed(42);
    a.metrics.carriersRunning.set(1);
    b.metrics.carriersRunning.set(2);
    await Promise.all([a.flush.flushNow(), b.flush.flushNow()]);
    let m = await scrape();
    expect(calls(m)).toBe(6);
    expect(m.value(METRIC.providerCalls, { provider: "p", outcome: "refused" })).toBe(1);
    expect(m.value(METRIC.carriersRunning)).toBe(3);
    expect(m.value(METRIC.processes, { kind: "worker" })).toBe(1);
    expect(m.value(METRIC.processes, { kind: "trigger" })).toBe(1);
    expect(m.value(`${METRIC.stampToRunning}_count`)).toBe(2);
    expect(m.value(`${METRIC.stampToRunning}_bucket`, { le: "0.5" })).toBe(1);
    expect(m.value(`${METRIC.stampToRunning}_bucket`, { le: "60" })).toBe(2);
    expect(m.value(`${METRIC.stampToRunning}_sum`)).toBeCloseTo(42.3);

    // Flushing again with nothing new adds nothing; growth adds only itself.
    await a.flush.flushNow();
    expect(calls(await scrape())).toBe(6);
    a.metrics.providerCall("p", "found");
    await a.flush.flushNow();
    expect(calls(await scrape())).toBe(7);

    // b stops flushing: until an expiry, its counters still count, its gauges do not.
    await age(b.metrics.processId);
    m = await scrape();
    expect(calls(m)).toBe(7);
    expect(m.value(METRIC.carriersRunning)).toBe(1);
    expect(m.value(METRIC.processes, { kind: "trigger" })).toBe(0);

    // a's next flush expires b: its counters move into `gone`, its gauges are dropped.
    await a.flush.flushNow();
    expect(await rowsOf(b.metrics.processId)).toEqual([]);
    const gone = await rowsOf(GONE_PROCESS);
    expect(gone.find((r) => r.name === METRIC.providerCalls)?.value).toBe(2);
    expect(gone.some((r) => r.name === METRIC.carriersRunning)).toBe(false);
    m = await scrape();
    expect(calls(m)).toBe(7);
    expect(m.value(`${METRIC.stampToRunning}_count`)).toBe(2);

    // b was only asleep: it flushes again, and only what came after is added.
    b.metrics.providerCall("p", "empty");
    await b.flush.flushNow();
    m = await scrape();
    expect(calls(m)).toBe(8);
    expect(m.value(METRIC.providerCalls, { outcome: "empty" })).toBe(1);
    expect(m.value(METRIC.carriersRunning)).toBe(3);

    // a stops: a last flush, then its rows retire into `gone`; nothing goes back.
    a.metrics.providerCall("p", "error");
    await a.flush.stop();
    expect(await rowsOf(a.metrics.processId)).toEqual([]);
    m = await scrape();
    expect(calls(m)).toBe(9);
    expect(m.value(METRIC.carriersRunning)).toBe(2);
    expect(m.value(METRIC.processes, { kind: "worker" })).toBe(0);
    await b.flush.stop();
    expect(calls(await scrape())).toBe(9);
  });

  it("flushes of one process never overlap: two at once send its growth once", async () => {
    const p = playProcess();
    const before = calls(await scrape());
    for (let i = 0; i < 5; i += 1) p.metrics.providerCall("q", "found");
    await Promise.all([p.flush.flushNow(), p.flush.flushNow(), p.flush.flushNow()]);
    expect(calls(await scrape()) - before).toBe(5);
    await p.flush.stop();
  });
});
