/**
 * Columns for a table made from a CSV file: one per header, with an id the API accepts
 * (`^[a-z][a-z0-9_]{0,62}$`, unique) and a type guessed from sample rows. A guess only
 * narrows when every non-empty sample agrees and the import (domain/csv-columns.ts) takes
 * every sample in it, so an import never fails on a type the sample did not show (text
 * takes anything).
 */
import type { Column, ColumnType } from "@/contracts/table";
import { importValue, type Refusal } from "@/domain/csv-columns";
import type { Result } from "@/domain/result";
import { ISO_DATE } from "@/domain/values";

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

/** The patterns are narrower than what the import takes (no `+5`, no yes/no): a guess is a claim. */
const GUESSES: [ColumnType, RegExp][] = [
  ["number", NUMBER],
  ["boolean", BOOLEAN],
  ["date", ISO_DATE],
];

export function guessType(samples: readonly string[]): ColumnType {
  const values = samples.filter((s) => s.trim() !== "");
  if (values.length === 0) return "text";
  for (const [type, pattern] of GUESSES) {
    const column: Column = { id: "guess", name: "guess", type };
    if (values.every((v) => pattern.test(v.trim()) && importValue(column, v).ok)) return type;
  }
  return "text";
}

/** Columns for `header`, typed from `rows` (arrays in header order). Names are kept. */
export function columnsFromCsv(
  header: readonly string[],
  rows: readonly string[][],
): Result<Column[], Refusal> {
  const taken = new Set<string>();
  const columns: Column[] = [];
  for (const [i, raw] of header.entries()) {
    const name = raw.trim() || `Column ${i + 1}`;
    if (columns.some((c) => c.name === name))
      return {
        ok: false,
        reason: {
          message: `The header ${JSON.stringify(name)} appears twice`,
          issues: [{ path: "line 1", message: "each column needs a name of its own" }],
        },
      };
    columns.push({ id: columnId(name, taken), name, type: guessType(rows.map((r) => r[i] ?? "")) });
  }
  return { ok: true, value: columns };
}
