/**
 * A line diff for the history panel: two JSON values printed the same way (2-space
 * indents, object keys in one fixed order, so only real changes differ), compared line by
 * line with a longest-common-subsequence table, and long unchanged runs folded away.
 * Pure: no React, no DOM.
 */

export type DiffOp = "same" | "added" | "removed";

export interface DiffLine {
  op: DiffOp;
  text: string;
}

/** What the panel draws: lines, and unchanged runs folded to their count. */
export type DiffRow = DiffLine | { op: "skipped"; count: number };

/** Keys that read best first in a block or an input; the rest follow alphabetically. */
const FIRST_KEYS = ["id", "name", "type"];

function keyOrder(a: string, b: string): number {
  const ia = FIRST_KEYS.indexOf(a);
  const ib = FIRST_KEYS.indexOf(b);
  if (ia !== -1 || ib !== -1)
    return (ia === -1 ? FIRST_KEYS.length : ia) - (ib === -1 ? FIRST_KEYS.length : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (typeof value === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(obj)
        .sort(keyOrder)
        .map((k) => [k, ordered(obj[k])]),
    );
  }
  return value;
}

/** Pretty JSON whose object keys come in a fixed order whatever order they were written in. */
export function stableJson(value: unknown): string {
  return JSON.stringify(ordered(value), null, 2) ?? "null";
}

/**
 * Past this many cells of the LCS table (what is left after the common head and tail are
 * cut), the middle is shown as removed then added: a definition holds at most 200 blocks,
 * so only a wholesale rewrite gets here, and then the LCS would show little anyway.
 */
const MAX_TABLE = 4_000_000;

/** The lines of `before` and `after` in order, each kept, removed (only in before) or added. */
export function lineDiff(before: readonly string[], after: readonly string[]): DiffLine[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  const same = (lines: readonly string[]): DiffLine[] =>
    lines.map((text) => ({ op: "same", text }));
  return [
    ...same(before.slice(0, head)),
    ...middle(a, b),
    ...same(before.slice(before.length - tail)),
  ];
}

function middle(a: readonly string[], b: readonly string[]): DiffLine[] {
  const removed = a.map((text): DiffLine => ({ op: "removed", text }));
  const added = b.map((text): DiffLine => ({ op: "added", text }));
  if (a.length === 0 || b.length === 0 || (a.length + 1) * (b.length + 1) > MAX_TABLE)
    return [...removed, ...added];
  // lcs[i * w + j]: the longest common subsequence of a[i..] and b[j..].
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ai = a[i] as string;
    if (ai === b[j]) {
      out.push({ op: "same", text: ai });
      i++;
      j++;
    } else if ((lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0)) {
      out.push({ op: "removed", text: ai });
      i++;
    } else {
      out.push({ op: "added", text: b[j] as string });
      j++;
    }
  }
  for (; i < a.length; i++) out.push({ op: "removed", text: a[i] as string });
  for (; j < b.length; j++) out.push({ op: "added", text: b[j] as string });
  return out;
}

/**
 * Unchanged runs longer than `context` lines on each side of a change (and at the ends,
 * `context` next to the change) fold into one `skipped` row; a fold always hides at least
 * two lines, since a one-line fold takes as much room as the line.
 */
export function collapseUnchanged(lines: readonly DiffLine[], context = 3): DiffRow[] {
  const out: DiffRow[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i]?.op !== "same") {
      out.push(lines[i] as DiffLine);
      i++;
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end]?.op === "same") end++;
    const keepBefore = i === 0 ? 0 : context;
    const keepAfter = end === lines.length ? 0 : context;
    const hidden = end - i - keepBefore - keepAfter;
    if (hidden >= 2) {
      out.push(...lines.slice(i, i + keepBefore));
      out.push({ op: "skipped", count: hidden });
      out.push(...lines.slice(end - keepAfter, end));
    } else out.push(...lines.slice(i, end));
    i = end;
  }
  return out;
}

export interface DefinitionDiff {
  rows: DiffRow[];
  added: number;
  removed: number;
}

/** `before` against `after`, both printed by `stableJson`, folded for reading. */
export function definitionDiff(before: unknown, after: unknown, context = 3): DefinitionDiff {
  const lines = lineDiff(stableJson(before).split("\n"), stableJson(after).split("\n"));
  return {
    rows: collapseUnchanged(lines, context),
    added: lines.filter((l) => l.op === "added").length,
    removed: lines.filter((l) => l.op === "removed").length,
  };
}
