/**
 * The AI column's prompt as a person writes it: `{{Column name}}` references (the column
 * picker inserts them at the cursor), read back against the table's columns, and turned
 * into the workflow's templates. A workflow group hands the columns it maps to the
 * workflow as `inputs.<name>`, and only mapped columns count as what the group reads
 * (ordering, re-arming on edits, dependencies), so each reference becomes
 * `{{ inputs.<column id> }}` with an input of that name mapped to the column. Pure.
 */
import type { Column } from "@/contracts/table";
import { parseTemplate } from "@/domain/templates";

/**
 * What goes between the braces for `column`: its name when that reads back to it alone
 * (unique among the names, no braces, no surrounding spaces the template would trim), else
 * its id when that does (no other column is named so); null when neither does.
 */
export function referenceFor(column: Column, columns: readonly Column[]): string | null {
  for (const text of [column.name, column.id]) {
    const clean = text !== "" && text === text.trim() && !/\{\{|\}\}/.test(text);
    if (clean && resolveReference(text, columns)?.id === column.id) return text;
  }
  return null;
}

/**
 * The column a reference names: the one column with that name, or else the column with
 * that id; null when none (or when several share the name and none has it as id).
 */
export function resolveReference(expression: string, columns: readonly Column[]): Column | null {
  const named = columns.filter((c) => c.name === expression);
  if (named.length === 1 && named[0]) return named[0];
  return columns.find((c) => c.id === expression) ?? null;
}

/** `insert` put in place of the selection `start…end`, and where the cursor goes after it. */
export function insertAtCursor(
  text: string,
  start: number,
  end: number,
  insert: string,
): { text: string; cursor: number } {
  const from = Math.max(0, Math.min(start, end, text.length));
  const to = Math.min(text.length, Math.max(start, end, from));
  return { text: text.slice(0, from) + insert + text.slice(to), cursor: from + insert.length };
}

/** The column's `{{reference}}` at the cursor; the text as it was when it has none. */
export function insertReference(
  text: string,
  start: number,
  end: number,
  column: Column,
  columns: readonly Column[],
): { text: string; cursor: number } {
  const ref = referenceFor(column, columns);
  if (ref === null) return { text, cursor: Math.max(start, end) };
  return insertAtCursor(text, start, end, `{{${ref}}}`);
}

export interface PromptReferences {
  /** The columns referenced, in table order, each once. */
  columns: Column[];
  /** References that name no column, as written, each once. */
  unknown: string[];
}

/** The columns the texts (prompt, system prompt) read, and the references that name none. */
export function promptReferences(
  texts: readonly string[],
  columns: readonly Column[],
): PromptReferences {
  const found = new Set<string>();
  const unknown: string[] = [];
  for (const text of texts) {
    for (const part of parseTemplate(text)) {
      if (part.expression === undefined) continue;
      const column = resolveReference(part.expression, columns);
      if (column) found.add(column.id);
      else if (!unknown.includes(part.expression)) unknown.push(part.expression);
    }
  }
  return { columns: columns.filter((c) => found.has(c.id)), unknown };
}

// JSONata reads these as operators or literals after a dot; quoted, they are names.
const JSONATA_WORDS = new Set(["and", "or", "in", "true", "false", "null", "function"]);

/** The workflow expression that reads column `id`'s input. */
export function inputExpression(id: string): string {
  return JSONATA_WORDS.has(id) ? `inputs.\`${id}\`` : `inputs.${id}`;
}

/**
 * The text as the workflow's template: each column reference becomes
 * `{{ inputs.<column id> }}`; anything else between braces is kept as it was written.
 */
export function compileTemplate(text: string, columns: readonly Column[]): string {
  let out = "";
  for (const part of parseTemplate(text)) {
    out += part.literal;
    if (part.expression === undefined) continue;
    const column = resolveReference(part.expression, columns);
    out += column ? `{{ ${inputExpression(column.id)} }}` : `{{ ${part.expression} }}`;
  }
  return out;
}
