/**
 * Columns for a table made from a CSV file: one per header, with an id the API accepts
 * (`^[a-z][a-z0-9_]{0,62}$`, unique) and a type guessed from sample rows. A guess only
 * narrows when every non-empty sample agrees, so an import never fails on a type the
 * sample did not show (text takes anything).
 */
import type { Column, ColumnType } from "../../contracts/table";

export function columnId(name: string, taken: Set<string>): string {
  const base =
    name
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .replace(/^(?=[0-9])/, "c_")
      .slice(0, 56) || "column";
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

const BOOLEAN = /^(true|false)$/i;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function guessType(samples: readonly string[]): ColumnType {
  const values = samples.map((s) => s.trim()).filter((s) => s !== "");
  if (values.length === 0) return "text";
  if (values.every((v) => NUMBER.test(v) && Number.isFinite(Number(v)))) return "number";
  if (values.every((v) => BOOLEAN.test(v))) return "boolean";
  if (values.every((v) => DATE.test(v) && !Number.isNaN(Date.parse(v)))) return "date";
  return "text";
}

/** Columns for `header`, typed from `rows` (arrays in header order). Names are kept. */
export function columnsFromCsv(header: readonly string[], rows: readonly string[][]): Column[] {
  const taken = new Set<string>();
  const seenNames = new Set<string>();
  return header.map((raw, i) => {
    const name = raw.trim() || `Column ${i + 1}`;
    if (seenNames.has(name)) throw new Error(`The header "${name}" appears twice`);
    seenNames.add(name);
    return {
      id: columnId(name, taken),
      name,
      type: guessType(rows.map((r) => r[i] ?? "")),
    };
  });
}
