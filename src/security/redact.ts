/**
 * Takes workspace secret values out of what leaves a run (outputs, events, errors, logs).
 * Invariants: the input is never mutated; every occurrence of a secret value of at least
 * MIN_SECRET_LENGTH characters inside a string (or an object key), as it is or in one of
 * the forms an echo brings it back in (`encodedForms`), becomes `[redacted]`, the longest
 * secret winning where two overlap; with nothing to redact the value itself is
 * returned, so the common case costs nothing.
 */

export const REDACTED = "[redacted]";
/** Shorter values would blank out ordinary words and digits everywhere. */
export const MIN_SECRET_LENGTH = 4;

/**
 * One pattern per secrets record: a run redacts many values with the same record. The
 * values it was built from are kept too, so a record changed since is noticed, not trusted.
 */
interface Compiled {
  values: string[];
  pattern: RegExp | null;
  /** Every form searched for, longest first (excerpts strip a cut-off start of one). */
  needles: string[];
}
const patterns = new WeakMap<Record<string, string>, Compiled>();

/** Base64 text must be at least this long to be searched for: shorter runs occur by chance. */
const MIN_BASE64_CHARS = 8;

function compiled(secrets: Record<string, string>): Compiled | null {
  const values = Object.values(secrets);
  if (values.length === 0) return null;
  const known = patterns.get(secrets);
  if (known && sameValues(known.values, values)) return known;
  const needles = new Set<string>();
  for (const value of values) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    for (const form of encodedForms(value)) needles.add(form);
  }
  // Alternation takes the first alternative that matches at a position: longest first
  // means a secret containing another is replaced whole, not in part.
  const sorted = [...needles].sort((a, b) => b.length - a.length);
  const pattern = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  const entry = { values, pattern, needles: sorted };
  patterns.set(secrets, entry);
  return entry;
}

function patternFor(secrets: Record<string, string>): RegExp | null {
  return compiled(secrets)?.pattern ?? null;
}

/**
 * The forms in which an echoed secret comes back: a server that echoes a request puts it
 * in a URL (query, redirect Location, encoded once or twice), in JSON (escaped once, or
 * twice when JSON text is itself a JSON string), or in a Basic credential (base64, whose
 * characters depend on where the secret starts, so each alignment's stable middle).
 */
export function encodedForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(encodeURIComponent(uri));
  forms.add(encodeURI(value));
  forms.add(new URLSearchParams({ k: value }).toString().slice(2));
  const once = JSON.stringify(value).slice(1, -1);
  forms.add(once);
  forms.add(JSON.stringify(once).slice(1, -1));
  for (const core of base64Cores(value)) forms.add(core);
  return [...forms];
}

/** For each of the three byte alignments, the base64 characters only the secret decides. */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    // `offset` foreign bytes before the secret: the first group mixes them in, skip it.
    const skip = offset === 0 ? 0 : 3 - offset;
    const body = bytes.subarray(skip);
    const whole = body.subarray(0, body.length - (body.length % 3));
    const core = whole.toString("base64");
    if (core.length < MIN_BASE64_CHARS) continue;
    out.push(core, whole.toString("base64url"));
  }
  return out;
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

/**
 * At most `max` characters of `text`, whitespace flattened, meant for an error message.
 * The whole text is redacted before it is cut, so a cut cannot leave half a secret; when
 * the text itself was cut short (`truncated`: only the start of a body was read) or is cut
 * here, a tail that is the start of a secret is dropped too.
 */
export function redactedExcerpt(
  text: string,
  secrets: Record<string, string>,
  max: number,
  opts: { truncated?: boolean } = {},
): string {
  const flat = redactText(redactText(text, secrets).replace(/\s+/g, " ").trim(), secrets);
  const cut = flat.length > max;
  let out = cut ? flat.slice(0, max) : flat;
  if (cut || opts.truncated) out = dropPartialTail(out, compiled(secrets)?.needles ?? []);
  return cut ? `${out}…` : out;
}

function dropPartialTail(text: string, needles: string[]): string {
  let end = text.length;
  for (const needle of needles) {
    for (let k = Math.min(needle.length - 1, end); k > 0; k--) {
      if (text.slice(0, end).endsWith(needle.slice(0, k))) {
        end -= k;
        break;
      }
    }
  }
  return text.slice(0, end);
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
