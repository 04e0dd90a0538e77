/**
 * The column editor's form: the column types offered, form state ↔ `Column`, the checks
 * made before sending, the saved column list for the PATCH, which groups use a column
 * (a used column can't be deleted), and the PATCH's issues back onto the form's fields.
 */
import type { Column, ColumnType, Group } from "@/contracts/table";
import type { Issue } from "../api";
import { idProblem } from "./editor-ids";
import { addError, type FieldErrors, type SplitIssues } from "./issue-paths";

export const COLUMN_TYPE_LABELS: Record<ColumnType, string> = {
  text: "Text",
  number: "Number",
  boolean: "Yes / no",
  date: "Date",
  json: "JSON",
  select: "Single select",
};

export const COLUMN_TYPE_HELP: Record<ColumnType, string> = {
  text: "Any text.",
  number: "Integers or decimals.",
  boolean: "true or false — shown as a checkbox.",
  date: "An ISO date, e.g. 2024-05-31 or 2024-05-31T12:00:00Z.",
  json: "Any JSON value: objects, lists, numbers, text.",
  select: "One value out of a fixed list of options.",
};

export const COLUMN_TYPE_LIST: readonly ColumnType[] = [
  "text",
  "number",
  "boolean",
  "date",
  "json",
  "select",
];

export const COLUMN_FIELDS = ["name", "id", "type", "options"] as const;
export type ColumnField = (typeof COLUMN_FIELDS)[number];

export interface ColumnForm {
  name: string;
  id: string;
  type: ColumnType;
  /** Select options, one per line (kept while another type is chosen). */
  options: string;
}

export function columnFormFrom(column?: Column): ColumnForm {
  return {
    name: column?.name ?? "",
    id: column?.id ?? "",
    type: column?.type ?? "text",
    options: column?.options?.join("\n") ?? "",
  };
}

/** The options of a select column: one per line, trimmed, blanks and repeats dropped. */
export function parseOptions(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const option = line.trim();
    if (option !== "" && !out.includes(option)) out.push(option);
  }
  return out;
}

export function columnFromForm(form: ColumnForm): Column {
  const base = { id: form.id.trim(), name: form.name.trim(), type: form.type };
  return form.type === "select" ? { ...base, options: parseOptions(form.options) } : base;
}

/** Checks the API would make, done before sending. `editingId`: the column being edited. */
export function validateColumnForm(
  form: ColumnForm,
  columns: readonly Column[],
  editingId?: string,
): FieldErrors {
  const errors: FieldErrors = {};
  const name = form.name.trim();
  if (name === "") errors.name = "Give the column a name";
  else if (name.length > 200) errors.name = "At most 200 characters";
  if (editingId === undefined) {
    const problem = idProblem(
      form.id.trim(),
      columns.map((c) => c.id),
      "column",
    );
    if (problem) errors.id = problem;
  }
  if (form.type === "select") {
    const options = parseOptions(form.options);
    if (options.length === 0) errors.options = "Add at least one option";
    else if (options.length > 500) errors.options = "At most 500 options";
    else {
      const long = options.find((o) => o.length > 200);
      if (long !== undefined) errors.options = `"${long.slice(0, 30)}…" is over 200 characters`;
    }
  }
  return errors;
}

/** The column list with `column` saved: replacing `editingId` in place, else appended. */
export function columnsWithSaved(
  columns: readonly Column[],
  column: Column,
  editingId?: string,
): { columns: Column[]; index: number } {
  const at = editingId === undefined ? -1 : columns.findIndex((c) => c.id === editingId);
  if (at < 0) return { columns: [...columns, column], index: columns.length };
  return { columns: columns.map((c, i) => (i === at ? column : c)), index: at };
}

export type ColumnRole = "input" | "output" | "dependency";

export interface ColumnUse {
  groupId: string;
  groupName: string;
  roles: ColumnRole[];
}

/** The groups that read (input, dependency) or write (output) column `columnId`. */
export function columnUsage(groups: readonly Group[], columnId: string): ColumnUse[] {
  const uses: ColumnUse[] = [];
  for (const g of groups) {
    const roles: ColumnRole[] = [];
    const inputs = g.kind === "waterfall" ? g.steps.map((st) => st.inputs) : [g.inputs];
    if (inputs.some((m) => Object.values(m).includes(columnId))) roles.push("input");
    if (g.outputs.some((o) => o.columnId === columnId)) roles.push("output");
    if (g.dependsOn.includes(columnId)) roles.push("dependency");
    if (roles.length > 0) uses.push({ groupId: g.id, groupName: g.name, roles });
  }
  return uses;
}

const ROLE_TEXT: Record<ColumnRole, string> = {
  input: "an input",
  output: "an output",
  dependency: "a dependency",
};

/** "Classify uses it as an input and a dependency." — one sentence per group. */
export function describeUsage(uses: readonly ColumnUse[]): string[] {
  return uses.map((u) => {
    const roles = u.roles.map((r) => ROLE_TEXT[r]);
    const list =
      roles.length <= 1
        ? (roles[0] ?? "")
        : `${roles.slice(0, -1).join(", ")} and ${roles[roles.length - 1]}`;
    return `“${u.groupName}” uses it as ${list}.`;
  });
}

/**
 * API issues for a column PATCH: `columns.<index>.<field>` lands on that field of the
 * column being edited; everything else is left for the notice.
 */
export function columnIssues(issues: readonly Issue[], index: number): SplitIssues {
  const fields: FieldErrors = {};
  const rest: Issue[] = [];
  const prefix = `columns.${index}.`;
  for (const issue of issues) {
    const field = issue.path.startsWith(prefix)
      ? issue.path.slice(prefix.length).split(".")[0]
      : undefined;
    if (field !== undefined && (COLUMN_FIELDS as readonly string[]).includes(field)) {
      addError(fields, field, issue.message);
    } else rest.push(issue);
  }
  return { fields, rest };
}
