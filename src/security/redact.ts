/**
 * Takes workspace secret values out of what leaves a run (outputs, events, errors, logs).
 * Invariants: the input is never mutated; every occurrence of a secret value of at least
 * MIN_SECRET_LENGTH characters inside a string (or an object key) becomes `[redacted]`,
 * the longest secret winning where two overlap; with nothing to redact the value itself is
 * returned, so the common case costs nothing.
 */

export const REDACTED = "[redacted]";
/** Shorter values would blank out ordinary words and digits everywhere. */
export const MIN_SECRET_LENGTH = 4;

/**
 * One pattern per secrets record: a run redacts many values with the same record. The
 * values it was built from are kept too, so a record changed since is noticed, not trusted.
 */
const patterns = new WeakMap<
  Record<string, string>,
  { values: string[]; pattern: RegExp | null }
>();

function patternFor(secrets: Record<string, string>): RegExp | null {
  const values = Object.values(secrets);
  if (values.length === 0) return null;
  const known = patterns.get(secrets);
  if (known && sameValues(known.values, values)) return known.pattern;
  const needles = new Set<string>();
  for (const value of values) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    needles.add(value);
    // The same secret as it appears inside a URL or inside JSON text (a logged request, a
    // serialized body) is the same leak.
    const encoded = encodeURIComponent(value);
    if (encoded !== value) needles.add(encoded);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) needles.add(escaped);
  }
  // Alternation takes the first alternative that matches at a position: longest first
  // means a secret containing another is replaced whole, not in part.
  const sorted = [...needles].sort((a, b) => b.length - a.length);
  const pattern = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  patterns.set(secrets, { values, pattern });
  return pattern;
}

function sameValues(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** `text` with every secret value in it replaced by `[redacted]`. */
export function redactText(text: string, secrets: Record<string, string>): string {
  const pattern = patternFor(secrets);
  return pattern ? replaceAll(text, pattern) : text;
}

/**
 * A copy of a JSON-like value (plain objects, arrays, primitives) with secret values
 * redacted in every string and key. Parts that need no change are shared with the input,
 * not copied; other objects (Dates, class instances) are passed through as they are.
 */
export function redact<T>(value: T, secrets: Record<string, string>): T {
  const pattern = patternFor(secrets);
  return pattern ? (walk(value, pattern) as T) : value;
}

function replaceAll(text: string, pattern: RegExp): string {
  // A global RegExp carries lastIndex state; replace() resets it, test() would not.
  return text.replace(pattern, REDACTED);
}

function walk(value: unknown, pattern: RegExp): unknown {
  if (typeof value === "string") return replaceAll(value, pattern);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = walk(item, pattern);
      if (next !== item && !out) out = value.slice(0, i);
      out?.push(next);
    }
    return out ?? value;
  }
  if (isPlainObject(value)) {
    let changed = false;
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value)) {
      const k = replaceAll(key, pattern);
      const v = walk(item, pattern);
      if (k !== key || v !== item) changed = true;
      entries.push([k, v]);
    }
    // fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
