/**
 * `GET /api/system`: the System page of a workspace. Its own numbers (runs, queue,
 * carriers, credits, errors) come from its tables' progress counters, its runs' counters,
 * the credit ledger and the error cells' index; the claims' latency and the providers'
 * load come from the deployment's metric series (no workspace label there), and say so;
 * they are shown only to a deployment's only workspace (another's calls, models and
 * volumes are not a workspace key's to read: `GET /api/metrics` has them, behind its token).
 * Every read is bounded by the workspace's tables and runs or the series, never by cells.
 */
import type { ProviderLoad, StampToRunning, SystemRun, SystemView } from "@/contracts/system";
import { type Failure, notFound } from "@/domain/errors";
import { type Bucket, histogramQuantile } from "@/domain/histogram-quantile";
import type { Result } from "@/domain/result";
import { METRIC } from "@/metrics/registry";
import { type ActiveDispatch, listActiveDispatches } from "@/store/dispatches/read";
import { type CountedSeries, readCountedSeries } from "@/store/metrics/read";
import { otherWorkspacesExist, recentCellErrors, workspaceCellLoad } from "@/store/system/read";
import type { ServiceContext } from "./context";
import { RunRates } from "./run-rates";
import { getUsage } from "./usage";

/** The newest cell errors the page lists. */
export const SYSTEM_ERRORS = 20;

/** This process's readings of the runs' counters (the rates). */
const rates = new RunRates();

export async function getSystem(
  ctx: ServiceContext,
  now = Date.now(),
): Promise<Result<SystemView, Failure>> {
  const usage = await getUsage(ctx);
  if (!usage.ok) return { ok: false, reason: notFound("workspace") };
  const shared = !(await otherWorkspacesExist(ctx.db, ctx.workspaceId));
  const [runs, load, errors, series] = await Promise.all([
    listActiveDispatches(ctx.db, ctx.workspaceId),
    workspaceCellLoad(ctx.db, ctx.workspaceId),
    recentCellErrors(ctx.db, ctx.workspaceId, SYSTEM_ERRORS),
    shared
      ? readCountedSeries(ctx.db, [
          METRIC.stampToRunning,
          METRIC.providerCalls,
          METRIC.rateLimitWait,
        ])
      : Promise.resolve([]),
  ]);
  rates.forget(now);
  const { month, used, reserved, limit, bySource } = usage.value;
  return {
    ok: true,
    value: {
      at: new Date(now).toISOString(),
      runs: runs.map((r) => systemRun(r, now)),
      queueDepth: load.queued,
      carriersRunning: load.running,
      stampToRunning: shared
        ? stampToRunning(series)
        : { scope: "withheld", claims: 0, p50Seconds: null, p99Seconds: null },
      providers: shared
        ? { scope: "deployment", list: providers(series) }
        : { scope: "withheld", list: [] },
      credits: { month, used, reserved, limit, bySource },
      errors: errors.map((e) => ({
        ...e,
        link: `/tables/${encodeURIComponent(e.tableId)}?row=${encodeURIComponent(e.rowId)}&group=${encodeURIComponent(e.groupId)}`,
      })),
    },
  };
}

function systemRun(r: ActiveDispatch, now: number): SystemRun {
  const c = r.counts;
  const total = Object.values(c).reduce((a, n) => a + n, 0);
  const done = c.completed + c.error + c.cancelled;
  const cellsPerSecond = rates.rate(r.id, done, now, Date.parse(r.createdAt));
  const left = c.queued + c.running;
  return {
    id: r.id,
    tableId: r.tableId,
    tableName: r.tableName,
    groupIds: r.groupIds,
    mode: r.mode,
    createdAt: r.createdAt,
    stamping: r.stamping,
    total,
    done,
    queued: c.queued,
    running: c.running,
    paused: c.paused,
    errors: c.error,
    cellsPerSecond: round(cellsPerSecond, 3),
    etaSeconds: left === 0 ? 0 : cellsPerSecond > 0 ? Math.ceil(left / cellsPerSecond) : null,
  };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function labelsOf(s: CountedSeries): Record<string, string> {
  return JSON.parse(s.labels) as Record<string, string>;
}

/** A histogram's buckets (of the series whose labels `match`), `+Inf` as Infinity. */
function bucketsOf(
  series: readonly CountedSeries[],
  family: string,
  match: (labels: Record<string, string>) => boolean = () => true,
): Bucket[] {
  const out: Bucket[] = [];
  for (const s of series) {
    if (s.name !== `${family}_bucket`) continue;
    const labels = labelsOf(s);
    if (!match(labels) || labels.le === undefined) continue;
    out.push({
      le: labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(labels.le),
      count: s.value,
    });
  }
  return out;
}

const quantile = (q: number, buckets: readonly Bucket[]) => {
  const v = histogramQuantile(q, buckets);
  return v === null ? null : round(v, 3);
};

function stampToRunning(series: readonly CountedSeries[]): StampToRunning {
  const buckets = bucketsOf(series, METRIC.stampToRunning);
  const claims = series.find((s) => s.name === `${METRIC.stampToRunning}_count`)?.value ?? 0;
  return {
    scope: "deployment",
    claims: Math.round(claims),
    p50Seconds: quantile(0.5, buckets),
    p99Seconds: quantile(0.99, buckets),
  };
}

const OUTCOMES = ["found", "empty", "error", "refused", "cached"] as const;

function providers(series: readonly CountedSeries[]): ProviderLoad[] {
  const byProvider = new Map<string, ProviderLoad>();
  const of = (provider: string): ProviderLoad => {
    let p = byProvider.get(provider);
    if (!p) {
      p = {
        provider,
        calls: 0,
        found: 0,
        empty: 0,
        error: 0,
        refused: 0,
        cached: 0,
        waits: 0,
        waitSeconds: 0,
        waitP99Seconds: null,
      };
      byProvider.set(provider, p);
    }
    return p;
  };
  for (const s of series) {
    const labels = labelsOf(s);
    const provider = labels.provider;
    if (provider === undefined) continue;
    if (s.name === METRIC.providerCalls) {
      const outcome = OUTCOMES.find((o) => o === labels.outcome);
      const p = of(provider);
      const n = Math.round(s.value);
      p.calls += n;
      if (outcome) p[outcome] += n;
    } else if (s.name === `${METRIC.rateLimitWait}_count`) of(provider).waits = Math.round(s.value);
    else if (s.name === `${METRIC.rateLimitWait}_sum`) of(provider).waitSeconds = round(s.value, 3);
  }
  for (const p of byProvider.values()) {
    p.waitP99Seconds = quantile(
      0.99,
      bucketsOf(series, METRIC.rateLimitWait, (l) => l.provider === p.provider),
    );
  }
  return [...byProvider.values()].sort((a, b) => a.provider.localeCompare(b.provider));
}
