/** The W1 sweep's SVG chart: well-formed, both series, x by rows, y from zero upwards. */
import { describe, expect, it } from "vitest";
import {
  CHART,
  type ChartPoint,
  formatNumber,
  rowsLabel,
  w1Chart,
  yTicks,
} from "../../bench/chart";

/**
 * Enough of XML well-formedness for one generator's output (no XML parser among the
 * dependencies): every tag closes in order, one root, quoted attributes without repeats,
 * no bare `&` or `<` in text or attributes. Returns the root's name.
 */
function xmlRoot(xml: string): string {
  const body = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, "");
  const attr = /\s+([A-Za-z_:][\w:.-]*)="((?:[^"<&]|&(?:amp|lt|gt|quot|apos);)*)"/y;
  const stack: string[] = [];
  let roots = 0;
  let root = "";
  let i = 0;
  for (;;) {
    const lt = body.indexOf("<", i);
    const text = body.slice(i, lt === -1 ? body.length : lt);
    if (/&(?!(?:amp|lt|gt|quot|apos);)/.test(text)) throw new Error(`bare & in "${text}"`);
    if (stack.length === 0 && text.trim() !== "") throw new Error(`text outside the root`);
    if (lt === -1) break;
    const name = /^<(\/?)([A-Za-z_][\w:.-]*)/.exec(body.slice(lt));
    if (!name?.[2]) throw new Error(`not a tag at "${body.slice(lt, lt + 40)}"`);
    let at = lt + name[0].length;
    const seen = new Set<string>();
    for (;;) {
      attr.lastIndex = at;
      const a = attr.exec(body);
      if (!a?.[1]) break;
      if (name[1] || seen.has(a[1])) throw new Error(`bad attribute ${a[1]} on ${name[2]}`);
      seen.add(a[1]);
      at = attr.lastIndex;
    }
    const end = /^\s*(\/?)>/.exec(body.slice(at));
    if (!end) throw new Error(`unterminated <${name[2]}> at "${body.slice(lt, at + 20)}"`);
    if (name[1]) {
      if (end[1]) throw new Error(`</${name[2]}/>`);
      const open = stack.pop();
      if (open !== name[2]) throw new Error(`</${name[2]}> closes <${open}>`);
    } else {
      if (stack.length === 0) {
        roots++;
        root = name[2];
      }
      if (!end[1]) stack.push(name[2]);
    }
    i = at + end[0].length;
  }
  if (stack.length > 0) throw new Error(`unclosed: ${stack.join(" > ")}`);
  if (roots !== 1) throw new Error(`${roots} root elements`);
  return root;
}

interface Mark {
  cx: number;
  cy: number;
  rows: number;
  value: number;
}

/** The data points of one series, in document order. */
function marks(svg: string, series: "engine" | "peer"): Mark[] {
  const start = svg.indexOf(`<g class="series ${series}"`);
  const block = svg.slice(start, svg.indexOf("</g>", start));
  return [
    ...block.matchAll(
      /<circle cx="([\d.]+)" cy="([\d.]+)" r="4" data-rows="(\d+)" data-value="([\d.]+)">/g,
    ),
  ].map((m) => ({ cx: Number(m[1]), cy: Number(m[2]), rows: Number(m[3]), value: Number(m[4]) }));
}

// A sweep listed out of order; the engine slows as the table grows, the peer does not.
const sweep: ChartPoint[] = [
  { rows: 30_000, cellsPerSec: 60, peerJobsPerSec: 1_400 },
  { rows: 3_000, cellsPerSec: 300, peerJobsPerSec: 1_100 },
  { rows: 100_000, cellsPerSec: 40, peerJobsPerSec: 1_250 },
  { rows: 10_000, cellsPerSec: 130, peerJobsPerSec: 1_330 },
];

describe("W1 chart", () => {
  it("is one well-formed svg element, its text escaped", () => {
    expect(xmlRoot(w1Chart(sweep))).toBe("svg");
    const odd = w1Chart(sweep, 'cells <&> "jobs"');
    expect(xmlRoot(odd)).toBe("svg");
    expect(odd).toContain("cells &lt;&amp;&gt; &quot;jobs&quot;");
  });

  it("has a checker that catches what it is there to catch", () => {
    expect(() => xmlRoot("<svg><g></svg>")).toThrow();
    expect(() => xmlRoot("<svg><g/></svg><svg/>")).toThrow();
    expect(() => xmlRoot('<svg a="1" a="2"/>')).toThrow();
    expect(() => xmlRoot("<svg>a & b</svg>")).toThrow();
    expect(() => xmlRoot("<svg><g></svg></g>")).toThrow();
    expect(() => xmlRoot("<svg>")).toThrow();
    expect(xmlRoot('<svg a="&amp;"><g/>x &lt; y</svg>')).toBe("svg");
  });

  it("draws both series, each with a line, a point per size and a legend entry", () => {
    const svg = w1Chart(sweep);
    for (const series of ["engine", "peer"] as const) {
      expect(marks(svg, series).map((m) => m.rows)).toEqual([3_000, 10_000, 30_000, 100_000]);
      expect(svg).toMatch(new RegExp(`<g class="series ${series}"[^>]*>\\n<polyline points=`));
    }
    expect(marks(svg, "engine").map((m) => m.value)).toEqual([300, 130, 60, 40]);
    expect(marks(svg, "peer").map((m) => m.value)).toEqual([1_100, 1_330, 1_400, 1_250]);
    expect(svg).toContain(">engine cells/s</text>");
    expect(svg).toContain(">peer jobs/s (graphile-worker no-op)</text>");
    expect(svg).toContain("rows in the table (log scale)");
    expect(svg).toContain(">per second</text>");
    for (const label of ["3k", "10k", "30k", "100k"]) expect(svg).toContain(`>${label}</text>`);
  });

  it("places sizes left to right by rows, on a log scale", () => {
    const xs = marks(w1Chart(sweep), "engine").map((m) => m.cx);
    for (let i = 1; i < xs.length; i++) expect(xs[i]).toBeGreaterThan(xs[i - 1] ?? Infinity);
    // 3k → 30k and 10k → 100k are both a factor of ten: the same distance.
    const [x3, x10, x30, x100] = xs as [number, number, number, number];
    expect(x30 - x3).toBeCloseTo(x100 - x10, 0);
    expect(x3).toBeGreaterThan(CHART.plotLeft);
    expect(x100).toBeLessThan(CHART.plotRight);
  });

  it("puts higher rates higher up, from zero on the x axis, the highest inside the plot", () => {
    const svg = w1Chart([...sweep, { rows: 300_000, cellsPerSec: 0, peerJobsPerSec: 1_000 }]);
    const engine = marks(svg, "engine");
    const peer = marks(svg, "peer");
    // SVG's y grows downwards: an inverted scale would put 300 cells/s below 40.
    expect(engine[0]?.cy).toBeLessThan(engine[3]?.cy ?? 0);
    for (const [i, e] of engine.entries()) expect(peer[i]?.cy).toBeLessThan(e.cy);
    expect(engine.at(-1)?.cy).toBe(CHART.plotBottom);
    const all = [...engine, ...peer].map((m) => m.cy);
    for (const cy of all) {
      expect(cy).toBeGreaterThanOrEqual(CHART.plotTop);
      expect(cy).toBeLessThanOrEqual(CHART.plotBottom);
    }
    // The highest value (1,400 jobs/s) fits, and the scale does not waste half the plot.
    const highest = Math.min(...all);
    expect(highest).toBeLessThan((CHART.plotTop + CHART.plotBottom) / 2);
    // The axis labels run from 0 at the bottom up to a round number above the highest.
    const labels = [...svg.matchAll(/<text x="72" y="([\d.]+)">([\d,.]+)<\/text>/g)].map((m) => ({
      y: Number(m[1]),
      value: Number(m[2]?.replace(/,/g, "")),
    }));
    expect(labels[0]).toEqual({ y: CHART.plotBottom + 4, value: 0 });
    expect(labels.at(-1)?.value).toBeGreaterThanOrEqual(1_400);
    for (let i = 1; i < labels.length; i++) {
      expect(labels[i]?.y).toBeLessThan(labels[i - 1]?.y ?? 0);
    }
  });

  it("gives the same bytes for the same points, whatever their order", () => {
    expect(w1Chart(sweep)).toBe(w1Chart([...sweep].reverse()));
  });

  it("centres a single size and refuses what a log axis cannot place", () => {
    const one = w1Chart([{ rows: 200, cellsPerSec: 50, peerJobsPerSec: 400 }]);
    expect(xmlRoot(one)).toBe("svg");
    expect(one).not.toContain("NaN");
    expect(marks(one, "engine")[0]?.cx).toBe((CHART.plotLeft + CHART.plotRight) / 2);
    expect(() => w1Chart([])).toThrow();
    expect(() => w1Chart([{ rows: 0, cellsPerSec: 1, peerJobsPerSec: 1 }])).toThrow();
    expect(() => w1Chart([{ rows: 10, cellsPerSec: Number.NaN, peerJobsPerSec: 1 }])).toThrow();
  });
});

/** The full runs' squares, in document order. */
function runSquares(svg: string): Mark[] {
  const start = svg.indexOf('<g class="series full-run"');
  if (start === -1) return [];
  const block = svg.slice(start, svg.indexOf("</g>", start));
  return [
    ...block.matchAll(
      /<rect x="([\d.]+)" y="([\d.]+)" width="8" height="8" data-rows="(\d+)" data-value="([\d.]+)">/g,
    ),
  ].map((m) => ({
    cx: Number(m[1]) + 4,
    cy: Number(m[2]) + 4,
    rows: Number(m[3]),
    value: Number(m[4]),
  }));
}

describe("W1 chart with W6's full runs", () => {
  const runs = [{ rows: 1_000_000, cellsPerSec: 900 }];

  it("extends the rows axis to the full run, the sweep keeping its log spacing", () => {
    const svg = w1Chart(sweep, undefined, runs);
    expect(xmlRoot(svg)).toBe("svg");
    const engine = marks(svg, "engine");
    const [square] = runSquares(svg);
    expect(square).toMatchObject({ rows: 1_000_000, value: 900 });
    // The last point of the axis is the full run's; 10k → 100k and 100k → 1M are the same distance.
    const x10 = engine[1]?.cx ?? 0;
    const x100 = engine[3]?.cx ?? 0;
    expect(square?.cx ?? 0).toBeGreaterThan(x100);
    expect((square?.cx ?? 0) - x100).toBeCloseTo(x100 - x10, 0);
    expect(square?.cx ?? 0).toBeLessThan(CHART.plotRight);
    expect(svg).toContain(">1M</text>");
    expect(svg).toContain(">W6 full run</text>");
    // No peer point where the peer did not run: the lines keep the sweep's four sizes.
    expect(marks(svg, "peer").map((m) => m.rows)).toEqual([3_000, 10_000, 30_000, 100_000]);
  });

  it("scales y to the highest of all, the full run included", () => {
    const high = w1Chart(sweep, undefined, [{ rows: 1_000_000, cellsPerSec: 5_000 }]);
    const [square] = runSquares(high);
    expect(square?.cy).toBeGreaterThanOrEqual(CHART.plotTop);
    for (const m of marks(high, "peer")) expect(m.cy).toBeGreaterThan(square?.cy ?? 0);
  });

  it("draws nothing of it without full runs, and refuses one a log axis cannot place", () => {
    expect(w1Chart(sweep, undefined, [])).toBe(w1Chart(sweep));
    expect(runSquares(w1Chart(sweep))).toEqual([]);
    expect(() => w1Chart(sweep, undefined, [{ rows: 0, cellsPerSec: 1 }])).toThrow();
    expect(() => w1Chart(sweep, undefined, [{ rows: 10, cellsPerSec: -1 }])).toThrow();
  });
});

describe("W1 chart labels", () => {
  it("rounds the y axis up to a 1, 2, 2.5 or 5 step", () => {
    expect(yTicks(1_330)).toEqual([0, 500, 1_000, 1_500]);
    expect(yTicks(300)).toEqual([0, 100, 200, 300]);
    expect(yTicks(0)).toEqual([0, 1]);
  });

  it("writes numbers without the machine's locale", () => {
    expect(formatNumber(1_500)).toBe("1,500");
    expect(formatNumber(0.30000000000000004)).toBe("0.3");
    expect(rowsLabel(3_000)).toBe("3k");
    expect(rowsLabel(100_000)).toBe("100k");
    expect(rowsLabel(2_500)).toBe("2.5k");
    expect(rowsLabel(400)).toBe("400");
    expect(rowsLabel(1_000_000)).toBe("1M");
    expect(rowsLabel(2_500_000)).toBe("2.5M");
  });
});
