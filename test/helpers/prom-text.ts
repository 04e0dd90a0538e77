/**
 * A parser of the Prometheus text exposition format (0.0.4), for the tests that scrape
 * `GET /api/metrics`: `# HELP` and `# TYPE` lines, and samples `name{label="value",…} value`
 * with the format's escapes in label values (`\\`, `\"`, `\n`). Strict: a line it cannot
 * read throws, as does a sample of a family whose TYPE came after it or a family declared
 * twice, so a malformed scrape fails the test rather than reading as zero.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** family → counter | gauge | histogram | summary | untyped */
  types: Map<string, string>;
  samples: Sample[];
  /** The sum of the samples named `name` whose labels include `labels`. */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether any sample is named `name`. */
  has(name: string): boolean;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return Number.NaN;
  const n = Number(text);
  if (text === "" || Number.isNaN(n)) throw new Error(`not a value: ${line}`);
  return n;
}

/** The labels inside `{…}` from `at` (just after `{`); returns them and the index after `}`. */
function parseLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at;
  for (;;) {
    if (line[i] === "}") return { labels, end: i + 1 };
    const eq = line.indexOf("=", i);
    const name = line.slice(i, eq);
    if (eq < 0 || !NAME.test(name) || line[eq + 1] !== '"') throw new Error(`bad label: ${line}`);
    let value = "";
    let j = eq + 2;
    for (; j < line.length && line[j] !== '"'; j += 1) {
      if (line[j] === "\\") {
        j += 1;
        const c = line[j];
        value += c === "n" ? "\n" : c === "\\" ? "\\" : c === '"' ? '"' : `\\${c ?? ""}`;
      } else value += line[j];
    }
    if (line[j] !== '"') throw new Error(`unterminated label value: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (line[i] === ",") i += 1;
    else if (line[i] !== "}") throw new Error(`bad label list: ${line}`);
  }
}

/** The family a sample belongs to: a histogram's or summary's parts name their family. */
function familyOf(name: string, types: Map<string, string>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ["histogram", "summary"].includes(types.get(base) ?? ""))
      return base;
  }
  return name;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const seenSamples = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line);
      if (!m) continue; // a comment
      const [, kind, name = "", rest = ""] = m;
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      if (kind === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest))
          throw new Error(`bad type: ${line}`);
        if (types.has(name)) throw new Error(`family ${name} declared twice`);
        if (seenSamples.has(name)) throw new Error(`TYPE of ${name} after its samples`);
        types.set(name, rest);
      }
      continue;
    }
    const nameEnd = line.search(/[{\s]/);
    const name = line.slice(0, nameEnd);
    if (nameEnd <= 0 || !NAME.test(name)) throw new Error(`bad sample: ${line}`);
    let labels: Record<string, string> = {};
    let rest = line.slice(nameEnd);
    if (line[nameEnd] === "{") {
      const parsed = parseLabels(line, nameEnd + 1);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const [valueText = "", timestamp] = rest.trim().split(/\s+/);
    if (timestamp !== undefined && !/^-?\d+$/.test(timestamp))
      throw new Error(`bad timestamp: ${line}`);
    seenSamples.add(familyOf(name, types));
    samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  const matches = (s: Sample, name: string, labels: Record<string, string>) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    types,
    samples,
    value: (name, labels = {}) =>
      samples.filter((s) => matches(s, name, labels)).reduce((sum, s) => sum + s.value, 0),
    has: (name) => samples.some((s) => s.name === name),
  };
}
