/**
 * Ids and names the grid editors make up for the person: a column or group id from its
 * name ("Company size" → `company_size`), why a typed id can't be used, and names that
 * don't clash with the table's. Pure; shared by the column and group forms.
 */

/** Ids the client chooses (columns, groups): the API's `ClientId`. */
export const CLIENT_ID = /^[a-z][a-z0-9_]{0,62}$/;
const MAX_ID = 63;

/** `name` as an id fragment: lowercase ASCII, digits and `_`, starting with a letter. */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (slug === "") return fallback;
  const lettered = /^[a-z]/.test(slug) ? slug : `${fallback}_${slug}`;
  return lettered.slice(0, MAX_ID).replace(/_+$/, "");
}

/**
 * An id for `name` that matches `^[a-z][a-z0-9_]{0,62}$` and is not in `taken`:
 * "Company size" → `company_size`, then `company_size_2`, … (suffixes stay within 63
 * characters).
 */
export function idFromName(name: string, taken: Iterable<string>, fallback = "column"): string {
  const used = new Set(taken);
  const base = slugify(name, fallback);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const id = `${base.slice(0, MAX_ID - suffix.length).replace(/_+$/, "")}${suffix}`;
    if (!used.has(id)) return id;
  }
}

/** `linkedin_url` → "Linkedin url". */
export function humanize(id: string): string {
  const words = id.replace(/[_.]+/g, " ").trim();
  return words === "" ? id : words.charAt(0).toUpperCase() + words.slice(1);
}

/** Why `id` cannot be used as a new id, or null when it can. */
export function idProblem(id: string, taken: Iterable<string>, what: string): string | null {
  if (id === "") return `Give the ${what} an id`;
  if (!/^[a-z]/.test(id)) return "Must start with a lowercase letter";
  if (id.length > MAX_ID) return `At most ${MAX_ID} characters`;
  if (!CLIENT_ID.test(id)) return "Only lowercase letters, digits and _";
  for (const t of taken) if (t === id) return `Another ${what} already has the id "${id}"`;
  return null;
}

/** `name`, or `name 2`, `name 3`, … — the first not in `takenNames` (ignoring case). */
export function uniqueName(name: string, takenNames: Iterable<string>): string {
  const taken = new Set([...takenNames].map((n) => n.trim().toLowerCase()));
  const base = name.trim();
  if (!taken.has(base.toLowerCase())) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base} ${n}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}
