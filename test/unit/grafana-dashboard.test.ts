/**
 * docs/grafana-dashboard.json queries only what the code exposes: every metric name in
 * every panel's PromQL is a family `GET /api/metrics` serves (the ones the process
 * registers, the Node process metrics, and the cell gauges the scrape adds), a histogram's
 * `_bucket`, `_sum` or `_count` only of a histogram, and every label a query matches or
 * groups by is one of the family's labels. A renamed metric or label fails here, not in a
 * dashboard that silently shows nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { METRIC, Metrics } from "@/metrics/registry";

const DASHBOARD = join(__dirname, "..", "..", "docs", "grafana-dashboard.json");

interface Family {
  type: string;
  labels: string[];
}

/** The families the scrape serves: the registry's, and the cell gauges added at the scrape. */
function servedFamilies(): Map<string, Family> {
  const metrics = new Metrics({ processMetrics: true });
  const out = new Map<string, Family>();
  for (const m of metrics.registry.getMetricsAsArray()) {
    const { labelNames } = m as unknown as { labelNames?: string[] };
    out.set(m.name, { type: String(m.type), labels: labelNames ?? [] });
  }
  out.set(METRIC.cells, { type: "gauge", labels: ["status"] });
  out.set(METRIC.queueDepth, { type: "gauge", labels: [] });
  return out;
}

/** PromQL words that are not metric names: functions, aggregations, keywords. */
const PROMQL_WORDS = new Set([
  "sum",
  "rate",
  "increase",
  "histogram_quantile",
  "by",
  "without",
  "avg",
  "max",
  "min",
  "count",
  "irate",
  "delta",
  "topk",
  "bottomk",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "offset",
  "le",
  "clamp_min",
  "abs",
]);

/** What a query names and which labels it uses of each name, or the problems found. */
function checkQuery(expr: string, families: Map<string, Family>): string[] {
  const problems: string[] = [];
  // Label values, ranges and Grafana's variables are not names.
  const bare = expr.replace(/"[^"]*"/g, '""').replace(/\[[^\]]*\]/g, "[]");
  const grouped = [...bare.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    (m[1] ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const withoutGroups = bare.replace(/\b(?:by|without)\s*\([^)]*\)/g, "");
  const selectors = [...withoutGroups.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?/g)];
  const usedFamilies: Family[] = [];
  for (const [, name = "", matchers] of selectors) {
    if (PROMQL_WORDS.has(name) || /^\d/.test(name)) continue;
    const part = /_(bucket|sum|count)$/.exec(name);
    const base = part ? name.slice(0, -part[0].length) : name;
    const family = families.get(name) ?? (part ? families.get(base) : undefined);
    if (!family) {
      problems.push(`unknown metric ${name}`);
      continue;
    }
    if (!families.has(name) && family.type !== "histogram")
      problems.push(`${name}: ${base} is a ${family.type}, not a histogram`);
    usedFamilies.push(family);
    const labels = [...(matchers ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map(
      (m) => m[1] ?? "",
    );
    const allowed = new Set([...family.labels, ...(part?.[1] === "bucket" ? ["le"] : [])]);
    for (const l of labels) if (!allowed.has(l)) problems.push(`${name} has no label ${l}`);
  }
  const known = new Set(usedFamilies.flatMap((f) => [...f.labels, "le"]));
  for (const l of grouped)
    if (!known.has(l)) problems.push(`grouped by ${l}, which no metric of the query has`);
  return problems;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function queriesOf(panels: Panel[]): { title: string; expr: string }[] {
  return panels.flatMap((p) => [
    ...(p.targets ?? []).flatMap((t) => (t.expr ? [{ title: p.title ?? "", expr: t.expr }] : [])),
    ...queriesOf(p.panels ?? []),
  ]);
}

describe("the Grafana dashboard", () => {
  const families = servedFamilies();
  const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] };
  const queries = queriesOf(dashboard.panels);

  it("finds a wrong name, a counter read as a histogram, and a label the metric lacks", () => {
    expect(checkQuery('sum(rate(cellflow_cells_total{status="x"}[5m]))', families)).toEqual([
      "unknown metric cellflow_cells_total",
    ]);
    expect(checkQuery("rate(cellflow_provider_calls_total_bucket[5m])", families)).toEqual([
      "cellflow_provider_calls_total_bucket: cellflow_provider_calls_total is a counter, not a histogram",
    ]);
    expect(checkQuery("sum(cellflow_credits_total_count)", families)).toEqual([
      "cellflow_credits_total_count: cellflow_credits_total is a counter, not a histogram",
    ]);
    expect(checkQuery('cellflow_provider_calls_total{status="refused"}', families)).toEqual([
      "cellflow_provider_calls_total has no label status",
    ]);
    expect(checkQuery("sum by (model) (cellflow_credits_total)", families)).toEqual([
      "grouped by model, which no metric of the query has",
    ]);
    expect(
      checkQuery(
        "histogram_quantile(0.99, sum by (le, provider) (rate(cellflow_rate_limit_wait_seconds_bucket[$__rate_interval])))",
        families,
      ),
    ).toEqual([]);
  });

  it("queries only the metrics and labels the code serves", () => {
    expect(queries.length).toBeGreaterThan(10);
    const problems = queries.flatMap((q) =>
      checkQuery(q.expr, families).map((p) => `${q.title}: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  it("shows each thing the issue names", () => {
    const all = queries.map((q) => q.expr).join("\n");
    for (const name of Object.values(METRIC).filter((n) => n !== METRIC.processes))
      expect(all, name).toContain(name);
    expect(all).toContain('outcome="refused"');
    expect(all).toContain('end="error"');
  });
});
