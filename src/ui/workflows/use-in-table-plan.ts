/**
 * "Use in a table…" without React: the form's defaults (inputs mapped to the columns of
 * the same id or name, one output per terminal block into a new column, the group named
 * after the workflow), the checks made before sending, and the `PATCH /api/tables/:id`
 * body that adds the group: the table's full column list with the new output columns
 * appended, and its full group list with the new group last (the PATCH replaces the lists
 * it is given). Pure, so it is unit-tested.
 */
import type { Column, Group } from "@/contracts/table";
import { idFromName, slugify } from "../grid/editor-ids";
import { OUTPUT_FROM } from "../grid/group-patch";
import { blocksOf } from "./try-request";

/** An output row's column choice meaning "create a new column". */
export const NEW_COLUMN = "";
export const NEW_COLUMN_TYPES = ["json", "text", "number"] as const;
export type NewColumnType = (typeof NEW_COLUMN_TYPES)[number];

export interface OutputRow {
  /** Stable for React and for placing errors. */
  key: string;
  /** `<blockId>` or `<blockId>.<path>`. */
  from: string;
  /** An existing column's id, or NEW_COLUMN. */
  column: string;
  newName: string;
  newType: NewColumnType;
}

export interface UseInTableForm {
  groupName: string;
  /** Input name → column id ("" = not mapped). */
  inputs: Record<string, string>;
  outputs: OutputRow[];
  version: "live" | "deployed";
  autoRun: boolean;
}

/** The part of a table the form reads. */
export interface TableShape {
  columns: readonly Column[];
  groups: readonly Group[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export interface DeclaredInput {
  name: string;
  required: boolean;
}

/** The inputs a definition declares. */
export function declaredInputs(definition: unknown): DeclaredInput[] {
  if (!isRecord(definition) || !Array.isArray(definition.inputs)) return [];
  return definition.inputs.flatMap((i) =>
    isRecord(i) && typeof i.name === "string"
      ? [{ name: i.name, required: i.required === true }]
      : [],
  );
}

/** Whether a block's `next` leads nowhere (absent, an empty list, a condition with no port). */
function endsHere(next: unknown): boolean {
  if (next === undefined || next === null) return true;
  if (typeof next === "string") return next === "";
  if (Array.isArray(next)) return next.length === 0;
  if (isRecord(next)) return !next.true && !next.false;
  return true;
}

/** The blocks a run can end on: those with no `next`, in definition order. */
export function terminalBlocks(definition: unknown): { id: string; name: string | null }[] {
  return blocksOf(definition).flatMap((b) =>
    typeof b.id === "string" && endsHere(b.next)
      ? [{ id: b.id, name: typeof b.name === "string" && b.name.trim() !== "" ? b.name : null }]
      : [],
  );
}

/** Each input → the column of the same id, else of the same name (ignoring case), else "". */
export function defaultInputMapping(
  inputNames: readonly string[],
  columns: readonly Pick<Column, "id" | "name">[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of inputNames) {
    const lower = name.toLowerCase();
    const col =
      columns.find((c) => c.id === name) ??
      columns.find((c) => c.name.trim().toLowerCase() === lower) ??
      columns.find((c) => slugify(c.name, "") === lower);
    out[name] = col?.id ?? "";
  }
  return out;
}

/** Column id → the name of the group that fills it. */
function outputOwners(groups: readonly Group[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const g of groups) for (const o of g.outputs) owners.set(o.columnId, g.name);
  return owners;
}

/** The existing columns an output may go to: those no group fills. */
export function freeColumns(table: TableShape): Column[] {
  const owners = outputOwners(table.groups);
  return table.columns.filter((c) => !owners.has(c.id));
}

/** A group id from its name, unique among the table's groups. */
export function groupIdFor(name: string, groups: readonly Pick<Group, "id">[]): string {
  return idFromName(
    name,
    groups.map((g) => g.id),
    "group",
  );
}

/** The form as it opens for a table. */
export function defaultForm(opts: {
  definition: unknown;
  workflowName: string;
  deployed: boolean;
  table: TableShape;
}): UseInTableForm {
  const inputs = declaredInputs(opts.definition).map((i) => i.name);
  return {
    groupName: opts.workflowName,
    inputs: defaultInputMapping(inputs, opts.table.columns),
    outputs: terminalBlocks(opts.definition).map((b, i) => ({
      key: `o${i}`,
      from: b.id,
      column: NEW_COLUMN,
      newName: b.name ?? b.id,
      newType: "json",
    })),
    version: opts.deployed ? "deployed" : "live",
    autoRun: false,
  };
}

/** Field → what is wrong with it (`groupName`, `input:<name>`, `from:<key>`, `column:<key>`). */
export type FormErrors = Record<string, string>;

/** The checks the API would make (worded for the form), before sending. */
export function validateForm(
  form: UseInTableForm,
  table: TableShape,
  definition: unknown,
): FormErrors {
  const errors: FormErrors = {};
  if (form.groupName.trim() === "") errors.groupName = "Give the group a name";
  else if (form.groupName.trim().length > 200) errors.groupName = "At most 200 characters";
  const columnIds = new Set(table.columns.map((c) => c.id));
  for (const input of declaredInputs(definition)) {
    const col = form.inputs[input.name] ?? "";
    if (col === "" && input.required) errors[`input:${input.name}`] = "Required input";
    else if (col !== "" && !columnIds.has(col))
      errors[`input:${input.name}`] = "That column no longer exists";
  }
  const read = new Set(Object.values(form.inputs).filter((c) => c !== ""));
  const owners = outputOwners(table.groups);
  const blockIds = new Set(blocksOf(definition).map((b) => b.id));
  const seen = new Set<string>();
  for (const row of form.outputs) {
    const from = row.from.trim();
    if (!OUTPUT_FROM.test(from)) errors[`from:${row.key}`] = "Use <blockId> or <blockId>.<path>";
    else if (!blockIds.has(from.split(".")[0]))
      errors[`from:${row.key}`] = `The workflow has no block “${from.split(".")[0]}”`;
    const colKey = `column:${row.key}`;
    if (row.column === NEW_COLUMN) {
      if (row.newName.trim() === "") errors[colKey] = "Name the new column";
      else if (row.newName.trim().length > 200) errors[colKey] = "At most 200 characters";
      continue;
    }
    if (!columnIds.has(row.column)) errors[colKey] = "That column no longer exists";
    else if (owners.has(row.column))
      errors[colKey] = `Already filled by the group “${owners.get(row.column)}”`;
    else if (seen.has(row.column)) errors[colKey] = "Another output already fills this column";
    else if (read.has(row.column)) errors[colKey] = "The group reads this column as an input";
    seen.add(row.column);
  }
  return errors;
}

export interface UseInTablePatch {
  body: { columns: Column[]; groups: Group[] };
  groupId: string;
}

/**
 * The PATCH body adding the workflow as a group: the table's columns plus one new column
 * per "new column" output (its id from its name, unique in the table), and its groups
 * plus the new one. The group depends on the columns of its required inputs, so auto-run
 * waits for them.
 */
export function buildUseInTablePatch(
  table: TableShape,
  form: UseInTableForm,
  workflow: { id: string; definition: unknown },
): UseInTablePatch {
  const columns = [...table.columns];
  const taken = new Set(columns.map((c) => c.id));
  const outputs: Group["outputs"] = [];
  for (const row of form.outputs) {
    let columnId = row.column;
    if (row.column === NEW_COLUMN) {
      const name = row.newName.trim();
      columnId = idFromName(name, taken);
      taken.add(columnId);
      columns.push({ id: columnId, name, type: row.newType });
    }
    outputs.push({ columnId, from: row.from.trim() });
  }
  const inputs = Object.fromEntries(Object.entries(form.inputs).filter(([, col]) => col !== ""));
  const required = new Set(
    declaredInputs(workflow.definition)
      .filter((i) => i.required)
      .map((i) => i.name),
  );
  const dependsOn = [
    ...new Set(Object.entries(inputs).flatMap(([n, col]) => (required.has(n) ? [col] : []))),
  ];
  const groupId = groupIdFor(form.groupName, table.groups);
  const group: Group = {
    id: groupId,
    name: form.groupName.trim(),
    kind: "workflow",
    workflowId: workflow.id,
    version: form.version,
    inputs,
    outputs,
    dependsOn,
    autoRun: form.autoRun,
  };
  return { body: { columns, groups: [...table.groups, group] }, groupId };
}
