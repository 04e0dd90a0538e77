/**
 * The W1 sweep as an SVG line chart: the engine's cells/s and the peer's jobs/s against
 * table rows, and W6's full runs (one worker process, as W1's) as points of their own
 * further along the same axis, where the peer has no paired run. No dependencies, no locale and no randomness: the same points give the same
 * bytes, so a re-measured chart in the docs diffs only where the figures moved.
 */

export interface ChartPoint {
  rows: number;
  cellsPerSec: number;
  peerJobsPerSec: number;
}

/** The canvas and the plot area inside it (SVG y grows downwards). */
export const CHART = {
  width: 640,
  height: 400,
  plotLeft: 80,
  plotRight: 616,
  plotTop: 64,
  plotBottom: 340,
  /** Keeps the end points off the axes. */
  inset: 28,
} as const;

/** A full run of one table outside the sweep (W6's): the engine only, no paired peer run. */
export interface ChartRun {
  rows: number;
  cellsPerSec: number;
}

const RUNS = { id: "full-run", label: "W6 full run", color: "#2f9e44" } as const;

const SERIES = [
  { key: "cellsPerSec", id: "engine", label: "engine cells/s", color: "#1f6feb", dash: "" },
  {
    key: "peerJobsPerSec",
    id: "peer",
    label: "peer jobs/s (graphile-worker no-op)",
    color: "#d9480f",
    dash: ' stroke-dasharray="6 4"',
  },
] as const;

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const n = (x: number) => x.toFixed(1);

/** Thousands separated by hand: toLocaleString would depend on the machine's locale. */
export function formatNumber(x: number): string {
  const [int = "0", frac] = String(+x.toPrecision(12)).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return frac ? `${grouped}.${frac}` : grouped;
}

/** 3000 → "3k", 2500 → "2.5k", 400 → "400", 1000000 → "1M": tick labels short enough for a log axis. */
export function rowsLabel(rows: number): string {
  if (rows >= 1_000_000) return `${formatNumber(rows / 1_000_000)}M`;
  return rows >= 1000 ? `${formatNumber(rows / 1000)}k` : formatNumber(rows);
}

/** A step of 1, 2, 2.5 or 5 × 10^k giving about five intervals up to at least `max`. */
export function yTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((f) => f * magnitude >= rough) ?? 10) * magnitude;
  const count = Math.ceil(max / step - 1e-9);
  return Array.from({ length: count + 1 }, (_, i) => +(i * step).toPrecision(12));
}

/** Every point placeable on the axes: positive rows, finite rates from zero. */
function checkPoints(input: readonly ChartPoint[], fullRuns: readonly ChartRun[]): void {
  if (input.length === 0) throw new Error("no points to chart");
  for (const r of fullRuns) {
    const ok =
      Number.isFinite(r.rows) && r.rows > 0 && Number.isFinite(r.cellsPerSec) && r.cellsPerSec >= 0;
    if (!ok) throw new Error(`cannot chart ${JSON.stringify(r)}`);
  }
  for (const p of input) {
    const ok =
      Number.isFinite(p.rows) &&
      p.rows > 0 &&
      Number.isFinite(p.cellsPerSec) &&
      p.cellsPerSec >= 0 &&
      Number.isFinite(p.peerJobsPerSec) &&
      p.peerJobsPerSec >= 0;
    if (!ok) throw new Error(`cannot chart ${JSON.stringify(p)}`);
  }
}

export function w1Chart(
  input: readonly ChartPoint[],
  title = "W1: throughput against table size",
  fullRuns: readonly ChartRun[] = [],
): string {
  checkPoints(input, fullRuns);
  const points = [...input].sort((a, b) => a.rows - b.rows);
  const runs = [...fullRuns].sort((a, b) => a.rows - b.rows || a.cellsPerSec - b.cellsPerSec);
  const c = CHART;

  // Rows on a log axis: the sweep's sizes roughly triple each step.
  const sizes = [...new Set([...points, ...runs].map((p) => p.rows))].sort((a, b) => a - b);
  const lo = Math.log10(sizes[0] ?? 1);
  const hi = Math.log10(sizes.at(-1) ?? 1);
  const left = c.plotLeft + c.inset;
  const right = c.plotRight - c.inset;
  const x = (rows: number) =>
    hi === lo ? (left + right) / 2 : left + ((Math.log10(rows) - lo) / (hi - lo)) * (right - left);

  // Per second from zero, so the gap between the lines reads as a ratio.
  const ticks = yTicks(
    Math.max(
      ...points.flatMap((p) => [p.cellsPerSec, p.peerJobsPerSec]),
      ...runs.map((r) => r.cellsPerSec),
    ),
  );
  const top = ticks.at(-1) ?? 1;
  const y = (v: number) => c.plotBottom - (v / top) * (c.plotBottom - c.plotTop);

  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${c.width}" height="${c.height}" viewBox="0 0 ${c.width} ${c.height}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${c.width}" height="${c.height}" fill="#ffffff"/>`,
    `<text x="${c.width / 2}" y="24" text-anchor="middle" font-size="15">${esc(title)}</text>`,
    '<g class="y-ticks" stroke="#e5e5e5">',
  ];
  for (const t of ticks) {
    out.push(`<line x1="${c.plotLeft}" y1="${n(y(t))}" x2="${c.plotRight}" y2="${n(y(t))}"/>`);
  }
  out.push("</g>", '<g class="y-labels" text-anchor="end" fill="#333333">');
  for (const t of ticks) {
    out.push(`<text x="${c.plotLeft - 8}" y="${n(y(t) + 4)}">${formatNumber(t)}</text>`);
  }
  out.push("</g>", '<g class="x-ticks" text-anchor="middle" fill="#333333" stroke-width="1">');
  for (const rows of sizes) {
    const px = n(x(rows));
    out.push(
      `<line x1="${px}" y1="${c.plotBottom}" x2="${px}" y2="${c.plotBottom + 5}" stroke="#333333"/>`,
      `<text x="${px}" y="${c.plotBottom + 19}">${rowsLabel(rows)}</text>`,
    );
  }
  out.push(
    "</g>",
    `<path class="axes" d="M${c.plotLeft} ${c.plotTop}V${c.plotBottom}H${c.plotRight}" fill="none" stroke="#333333"/>`,
    `<text x="${(c.plotLeft + c.plotRight) / 2}" y="${c.height - 12}" text-anchor="middle">rows in the table (log scale)</text>`,
    `<text transform="translate(20 ${(c.plotTop + c.plotBottom) / 2}) rotate(-90)" text-anchor="middle">per second</text>`,
  );
  for (const s of SERIES) {
    const unit = s.id === "engine" ? "cells/s" : "jobs/s";
    out.push(
      `<g class="series ${s.id}" stroke="${s.color}" fill="${s.color}">`,
      `<polyline points="${points.map((p) => `${n(x(p.rows))},${n(y(p[s.key]))}`).join(" ")}" fill="none" stroke-width="2"${s.dash}/>`,
    );
    for (const p of points) {
      out.push(
        `<circle cx="${n(x(p.rows))}" cy="${n(y(p[s.key]))}" r="4" data-rows="${p.rows}" data-value="${+p[s.key].toFixed(3)}"><title>${formatNumber(p.rows)} rows: ${formatNumber(+p[s.key].toFixed(1))} ${unit}</title></circle>`,
      );
    }
    out.push("</g>");
  }
  out.push(...runMarks(runs, x, y));
  out.push('<g class="legend">');
  SERIES.forEach((s, i) => {
    const ly = 44;
    const lx = c.plotLeft + i * 170;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash}/>`,
      `<circle cx="${lx + 12}" cy="${ly}" r="4" fill="${s.color}"/>`,
      `<text x="${lx + 30}" y="${ly + 4}">${esc(s.label)}</text>`,
    );
  });
  if (runs.length > 0) out.push(...runsLegend());
  out.push("</g>", "</svg>", "");
  return out.join("\n");
}

/** The full runs: squares, unjoined, as each is a run of its own, not a point of the sweep's line. */
function runMarks(
  runs: readonly ChartRun[],
  x: (rows: number) => number,
  y: (v: number) => number,
): string[] {
  if (runs.length === 0) return [];
  return [
    `<g class="series ${RUNS.id}" stroke="${RUNS.color}" fill="${RUNS.color}">`,
    ...runs.map(
      (r) =>
        `<rect x="${n(x(r.rows) - 4)}" y="${n(y(r.cellsPerSec) - 4)}" width="8" height="8" data-rows="${r.rows}" data-value="${+r.cellsPerSec.toFixed(3)}"><title>${formatNumber(r.rows)} rows, a full run: ${formatNumber(+r.cellsPerSec.toFixed(1))} cells/s</title></rect>`,
    ),
    "</g>",
  ];
}

/** The full runs' legend entry, after the lines' on the same row (the plot's top edge leaves room for one). */
function runsLegend(): string[] {
  const lx = CHART.plotLeft + 2 * 170 + 100;
  return [
    `<rect x="${lx + 8}" y="40" width="8" height="8" fill="${RUNS.color}"/>`,
    `<text x="${lx + 22}" y="48">${esc(RUNS.label)}</text>`,
  ];
}
