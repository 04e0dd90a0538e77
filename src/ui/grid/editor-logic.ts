/**
 * The pure side of the grid's column and group editors: ids from names, form state →
 * the PATCH body, client-side checks, and API issues (`columns.3.name`,
 * `groups.1.outputs.0.columnId`) → the form field they are about. No React, no fetch.
 */
import type { Column, ColumnType, Group, TableView } from "../../contracts/table";
import type { Issue } from "../api";

/** Ids the client chooses (columns, groups): the API's `ClientId`. */
export const CLIENT_ID = /^[a-z][a-z0-9_]{0,62}$/;
/** A group output's `from`: `<blockId>`, `<blockId>.<path>` or an enrichment output id. */
export const OUTPUT_FROM = /^[a-z][a-z0-9_]{0,62}(\.[A-Za-z0-9_]+)*$/;
const MAX_ID = 63;

/** Field name → message for the person filling the form. */
export type FieldErrors = Record<string, string>;

export interface SplitIssues {
  /** Issues about a field of the form being edited, keyed by field. */
  fields: FieldErrors;
  /** Everything else, for the notice at the top. */
  rest: Issue[];
}

function addError(errors: FieldErrors, field: string, message: string): void {
  const prev = errors[field];
  errors[field] = prev === undefined || prev === message ? message : `${prev}; ${message}`;
}

// ---------------------------------------------------------------------------------------
// Ids

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

// ---------------------------------------------------------------------------------------
// Columns

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
    if (Object.values(g.inputs).includes(columnId)) roles.push("input");
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

// ---------------------------------------------------------------------------------------
// Groups

/** The `column` value of an output row that creates a column. Not a valid column id. */
export const NEW_COLUMN = "+new";

export interface OutputRow {
  /** Stable across edits, for React keys and for field errors. */
  key: string;
  from: string;
  /** An existing column id, `NEW_COLUMN`, or "" (not chosen yet). */
  column: string;
  /** The new column's name when `column` is `NEW_COLUMN`. */
  newName: string;
}

export type GroupKind = Group["kind"];

export interface GroupForm {
  name: string;
  id: string;
  kind: GroupKind;
  workflowId: string;
  version: "live" | "deployed";
  enrichmentId: string;
  /** Input name → column id ("" = not mapped). */
  inputs: Record<string, string>;
  outputs: OutputRow[];
  dependsOn: string[];
  autoRun: boolean;
}

/** What the editor knows about an enrichment (`GET /api/enrichments`). */
export interface EnrichmentInfo {
  id: string;
  name: string;
  description: string;
  cost: number;
  inputs: { id: string; type: string; required: boolean; description?: string }[];
  outputs: { id: string; type: string; description?: string }[];
}

/** A workflow or enrichment input as the editor lists it. */
export interface SourceInput {
  name: string;
  type?: string;
  required: boolean;
  description?: string;
}

let rowSeq = 0;
export function outputRow(from = "", column = "", newName = ""): OutputRow {
  rowSeq += 1;
  return { key: `o${rowSeq}`, from, column, newName };
}

export function groupFormFrom(group?: Group): GroupForm {
  return {
    name: group?.name ?? "",
    id: group?.id ?? "",
    kind: group?.kind ?? "workflow",
    workflowId: group?.kind === "workflow" ? group.workflowId : "",
    version: group?.kind === "workflow" ? group.version : "live",
    enrichmentId: group?.kind === "enrichment" ? group.enrichmentId : "",
    inputs: { ...(group?.inputs ?? {}) },
    outputs: (group?.outputs ?? []).map((o) => outputRow(o.from, o.columnId)),
    dependsOn: [...(group?.dependsOn ?? [])],
    autoRun: group?.autoRun ?? false,
  };
}

/** An enrichment field type as a column type (unknown types become text). */
export function enrichmentColumnType(type: string): ColumnType {
  switch (type) {
    case "number":
    case "boolean":
    case "json":
    case "text":
      return type;
    default:
      return "text";
  }
}

/** The column type a new output column gets: text for workflows, the output's type for enrichments. */
export function newOutputColumnType(
  kind: GroupKind,
  from: string,
  enrichment?: EnrichmentInfo | null,
): ColumnType {
  if (kind === "workflow") return "text";
  const out = enrichment?.outputs.find((o) => o.id === from.trim());
  return out ? enrichmentColumnType(out.type) : "text";
}

/** Column id → name of the group (other than `exceptGroupId`) that writes it. */
export function columnOwners(
  groups: readonly Group[],
  exceptGroupId?: string,
): Map<string, string> {
  const owners = new Map<string, string>();
  for (const g of groups) {
    if (g.id === exceptGroupId) continue;
    for (const o of g.outputs) owners.set(o.columnId, g.name);
  }
  return owners;
}

/** Input names the group should keep: those of the chosen source, or all when unknown. */
function keptInputs(
  inputs: Record<string, string>,
  inputNames: readonly string[] | null,
): [string, string][] {
  return Object.entries(inputs).filter(
    ([name, col]) => col !== "" && (inputNames === null || inputNames.includes(name)),
  );
}

/**
 * The default dependencies: the mapped input columns, in table order, without the
 * group's own output columns (a group may not wait on what it writes).
 */
export function defaultDependsOn(
  form: Pick<GroupForm, "inputs" | "outputs">,
  columns: readonly Column[],
  inputNames: readonly string[] | null,
): string[] {
  const mapped = new Set(keptInputs(form.inputs, inputNames).map(([, col]) => col));
  const own = new Set(form.outputs.map((o) => o.column));
  return columns.filter((c) => mapped.has(c.id) && !own.has(c.id)).map((c) => c.id);
}

/**
 * Input mappings for a newly chosen source: keeps the mappings in `current` that still
 * name a column, and guesses the rest from column ids and names (`email` → a column
 * `email` or "E-mail"; then a column whose id contains the input name).
 */
export function suggestInputs(
  inputs: readonly SourceInput[],
  columns: readonly Column[],
  current: Record<string, string> = {},
): Record<string, string> {
  const ids = new Set(columns.map((c) => c.id));
  const out: Record<string, string> = {};
  for (const input of inputs) {
    const kept = current[input.name];
    if (kept !== undefined && ids.has(kept)) {
      out[input.name] = kept;
      continue;
    }
    const want = slugify(input.name, "x");
    const exact = columns.find(
      (c) => c.id === input.name || slugify(c.name, "x") === want || c.id === want,
    );
    const loose =
      exact ??
      (want.length >= 3
        ? columns.find((c) => c.id.includes(want) || slugify(c.name, "x").includes(want))
        : undefined);
    out[input.name] = loose?.id ?? "";
  }
  return out;
}

/** Block ids no `next` leaves from: the usual places a workflow's result comes from. */
export function terminalBlockIds(blocks: readonly { id: string; next?: unknown }[]): string[] {
  return blocks
    .filter((b) => {
      const n = b.next;
      if (n === undefined || n === null) return true;
      if (Array.isArray(n)) return n.length === 0;
      if (typeof n === "object") return Object.values(n).every((v) => v === undefined);
      return false;
    })
    .map((b) => b.id);
}

/** A `from` for a new workflow output row: the first end block not used yet. */
export function defaultFrom(
  blocks: readonly { id: string; next?: unknown }[],
  used: readonly string[],
): string {
  const ends = terminalBlockIds(blocks);
  const all = blocks.map((b) => b.id);
  return (
    ends.find((id) => !used.includes(id)) ??
    all.find((id) => !used.includes(id)) ??
    ends[0] ??
    all[0] ??
    ""
  );
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

/**
 * A name for a new output column: the output id made readable, prefixed with the group
 * name when a column (or another new output) already has that name.
 */
export function suggestOutputName(
  outputId: string,
  groupName: string,
  takenNames: Iterable<string>,
): string {
  const names = [...takenNames];
  const taken = new Set(names.map((n) => n.trim().toLowerCase()));
  const plain = humanize(outputId);
  if (!taken.has(plain.toLowerCase())) return plain;
  const prefixed = groupName.trim() === "" ? plain : `${groupName.trim()} ${plain.toLowerCase()}`;
  return uniqueName(prefixed, names);
}

/**
 * Rows for every enrichment output not yet mapped, each into a new column (typed from
 * the output by `buildGroupPatch`).
 */
export function addAllEnrichmentOutputs(
  form: Pick<GroupForm, "name" | "outputs">,
  enrichment: EnrichmentInfo,
  columns: readonly Column[],
): OutputRow[] {
  const rows = filledRows(form.outputs);
  const names = [
    ...columns.map((c) => c.name),
    ...rows.filter((r) => r.column === NEW_COLUMN).map((r) => r.newName),
  ];
  for (const out of enrichment.outputs) {
    if (rows.some((r) => r.from === out.id)) continue;
    const name = suggestOutputName(out.id, form.name || enrichment.name, names);
    names.push(name);
    rows.push(outputRow(out.id, NEW_COLUMN, name));
  }
  return rows;
}

/** Same members, any order. */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** What the editor needs of a workflow (`GET /api/workflows/:id`). */
export interface WorkflowInfo {
  name: string;
  definition: {
    inputs: readonly { name: string; type?: string; required?: boolean }[];
    blocks: readonly { id: string; type?: string; next?: unknown }[];
  };
}

export function workflowInputs(workflow: WorkflowInfo): SourceInput[] {
  return workflow.definition.inputs.map((i) => ({
    name: i.name,
    required: i.required ?? false,
    ...(i.type !== undefined ? { type: i.type } : {}),
  }));
}

export function enrichmentInputs(enrichment: EnrichmentInfo): SourceInput[] {
  return enrichment.inputs.map((i) => ({
    name: i.id,
    type: i.type,
    required: i.required,
    ...(i.description !== undefined ? { description: i.description } : {}),
  }));
}

function filledRows(rows: readonly OutputRow[]): OutputRow[] {
  return rows.filter((r) => r.from.trim() !== "" || r.column !== "" || r.newName.trim() !== "");
}

/**
 * The form after a person picks a workflow: the group named after it when unnamed,
 * inputs guessed from the columns (mappings that still apply kept), and, when no output
 * row fits the workflow, one from its end block into a new column.
 */
export function applyWorkflowChoice(
  form: GroupForm,
  workflow: WorkflowInfo,
  columns: readonly Column[],
): GroupForm {
  const blocks = workflow.definition.blocks;
  const blockIds = blocks.map((b) => b.id);
  const name = form.name.trim() === "" ? workflow.name : form.name;
  const kept = filledRows(form.outputs).filter((r) =>
    blockIds.includes(r.from.trim().split(".")[0] ?? ""),
  );
  const outputs =
    kept.length > 0 || blocks.length === 0
      ? kept
      : [
          outputRow(
            defaultFrom(blocks, []),
            NEW_COLUMN,
            uniqueName(
              name,
              columns.map((c) => c.name),
            ),
          ),
        ];
  return {
    ...form,
    name,
    inputs: suggestInputs(workflowInputs(workflow), columns, form.inputs),
    outputs,
  };
}

/** The same for an enrichment: its first output into a new column when none fits. */
export function applyEnrichmentChoice(
  form: GroupForm,
  enrichment: EnrichmentInfo,
  columns: readonly Column[],
): GroupForm {
  const name = form.name.trim() === "" ? enrichment.name : form.name;
  const outputIds = enrichment.outputs.map((o) => o.id);
  const kept = filledRows(form.outputs).filter((r) => outputIds.includes(r.from.trim()));
  const first = enrichment.outputs[0];
  const outputs =
    kept.length > 0 || first === undefined
      ? kept
      : [
          outputRow(
            first.id,
            NEW_COLUMN,
            suggestOutputName(
              first.id,
              name,
              columns.map((c) => c.name),
            ),
          ),
        ];
  return {
    ...form,
    kind: "enrichment",
    enrichmentId: enrichment.id,
    name,
    inputs: suggestInputs(enrichmentInputs(enrichment), columns, form.inputs),
    outputs,
  };
}

/** Field keys of the group form (for errors). */
export const groupField = {
  input: (name: string) => `input.${name}`,
  outputFrom: (rowKey: string) => `output.${rowKey}.from`,
  outputColumn: (rowKey: string) => `output.${rowKey}.column`,
};

export interface ValidateGroupOptions {
  editingId?: string;
  /** The chosen source's inputs, or null while they are not known. */
  inputs: readonly SourceInput[] | null;
  /** Valid `from` values (enrichment output ids), or null for free text (workflows). */
  outputIds: readonly string[] | null;
  /** The workflow's block ids, when known: a `from` must start with one of them. */
  blockIds?: readonly string[] | null;
}

/** Checks the API would make (and a few it would word less kindly), before sending. */
export function validateGroupForm(
  table: Pick<TableView, "columns" | "groups">,
  form: GroupForm,
  opts: ValidateGroupOptions,
): FieldErrors {
  const errors: FieldErrors = {};
  const name = form.name.trim();
  if (name === "") errors.name = "Give the group a name";
  else if (name.length > 200) errors.name = "At most 200 characters";
  if (opts.editingId === undefined) {
    const problem = idProblem(
      form.id.trim(),
      table.groups.map((g) => g.id),
      "group",
    );
    if (problem) errors.id = problem;
  }
  if (form.kind === "workflow" && form.workflowId === "") errors.source = "Choose a workflow";
  if (form.kind === "enrichment" && form.enrichmentId === "")
    errors.source = "Choose an enrichment";

  const columnIds = new Set(table.columns.map((c) => c.id));
  for (const input of opts.inputs ?? []) {
    const col = form.inputs[input.name] ?? "";
    if (col === "" && input.required) errors[groupField.input(input.name)] = "Required input";
    else if (col !== "" && !columnIds.has(col))
      errors[groupField.input(input.name)] = "That column no longer exists";
  }

  const names = opts.inputs?.map((i) => i.name) ?? null;
  const read = new Set([
    ...keptInputs(form.inputs, names).map(([, col]) => col),
    ...form.dependsOn,
  ]);
  const owners = columnOwners(table.groups, opts.editingId);
  const seen = new Set<string>();
  for (const row of form.outputs) {
    const from = row.from.trim();
    const fromKey = groupField.outputFrom(row.key);
    const colKey = groupField.outputColumn(row.key);
    if (from === "") errors[fromKey] = "Say which result goes into the column";
    else if (opts.outputIds !== null && !opts.outputIds.includes(from))
      errors[fromKey] = "Not an output of this enrichment";
    else if (!OUTPUT_FROM.test(from)) errors[fromKey] = "Use <blockId> or <blockId>.<path>";
    else if (opts.blockIds && !opts.blockIds.includes(from.split(".")[0] ?? ""))
      errors[fromKey] = `The workflow has no block “${from.split(".")[0]}”`;

    if (row.column === "") errors[colKey] = "Choose a column";
    else if (row.column === NEW_COLUMN) {
      if (row.newName.trim() === "") errors[colKey] = "Name the new column";
      else if (row.newName.trim().length > 200) errors[colKey] = "At most 200 characters";
    } else if (!columnIds.has(row.column)) errors[colKey] = "That column no longer exists";
    else if (seen.has(row.column)) errors[colKey] = "Another output already fills this column";
    else if (owners.has(row.column))
      errors[colKey] = `Already filled by the group “${owners.get(row.column)}”`;
    else if (read.has(row.column))
      errors[colKey] = "The group reads this column (input or dependency); it cannot also fill it";
    if (row.column !== NEW_COLUMN && row.column !== "") seen.add(row.column);
  }
  return errors;
}

export interface GroupPatch {
  body: { columns: Column[]; groups: Group[] };
  /** Where the group sits in `body.groups`. */
  groupIndex: number;
  /** `body.groups[groupIndex].outputs[i]` came from the form row with key `outputRows[i]`. */
  outputRows: string[];
  /** Columns added for "New column…" rows: their index in `body.columns` and row key. */
  newColumns: { index: number; row: string }[];
}

export interface BuildGroupOptions {
  editingId?: string;
  /** The chosen source's input names, or null to keep every mapped input. */
  inputNames: readonly string[] | null;
  enrichment?: EnrichmentInfo | null;
}

/**
 * The `PATCH /api/tables/:id` body for the form: the full column list (with one new
 * column per "New column…" row, id derived from its name) and the full group list (the
 * edited group in its old place, a new one last). Blank output rows are left out.
 */
export function buildGroupPatch(
  table: Pick<TableView, "columns" | "groups">,
  form: GroupForm,
  opts: BuildGroupOptions,
): GroupPatch {
  const columns = [...table.columns];
  const taken = new Set(columns.map((c) => c.id));
  const outputs: Group["outputs"] = [];
  const outputRows: string[] = [];
  const newColumns: GroupPatch["newColumns"] = [];
  for (const row of form.outputs) {
    const from = row.from.trim();
    if (from === "" && row.column === "" && row.newName.trim() === "") continue;
    let columnId = row.column;
    if (row.column === NEW_COLUMN) {
      const name = row.newName.trim();
      columnId = idFromName(name, taken);
      taken.add(columnId);
      newColumns.push({ index: columns.length, row: row.key });
      columns.push({
        id: columnId,
        name,
        type: newOutputColumnType(form.kind, from, opts.enrichment),
      });
    }
    outputs.push({ columnId, from });
    outputRows.push(row.key);
  }

  const known = new Set(table.columns.map((c) => c.id));
  const wanted = new Set(form.dependsOn);
  const base = {
    id: form.id.trim(),
    name: form.name.trim(),
    inputs: Object.fromEntries(keptInputs(form.inputs, opts.inputNames)),
    outputs,
    dependsOn: table.columns.filter((c) => wanted.has(c.id) && known.has(c.id)).map((c) => c.id),
    autoRun: form.autoRun,
  };
  const group: Group =
    form.kind === "workflow"
      ? { ...base, kind: "workflow", workflowId: form.workflowId, version: form.version }
      : { ...base, kind: "enrichment", enrichmentId: form.enrichmentId };

  const at =
    opts.editingId === undefined ? -1 : table.groups.findIndex((g) => g.id === opts.editingId);
  const groups =
    at < 0 ? [...table.groups, group] : table.groups.map((g, i) => (i === at ? group : g));
  return {
    body: { columns, groups },
    groupIndex: at < 0 ? table.groups.length : at,
    outputRows,
    newColumns,
  };
}

const GROUP_FIELDS: Record<string, string> = {
  name: "name",
  id: "id",
  kind: "kind",
  workflowId: "source",
  enrichmentId: "source",
  version: "version",
  autoRun: "autoRun",
  dependsOn: "dependsOn",
};

/**
 * API issues for a group PATCH, onto the fields of the group being edited:
 * `groups.<g>.outputs.<i>.columnId` → that output row's column, `…from` → its `from`,
 * `groups.<g>.inputs.<name>` → that input, `groups.<g>.dependsOn[.<i>]` → dependencies,
 * and `columns.<n>.*` of a column the form added → the row that asked for it.
 */
export function groupIssues(
  issues: readonly Issue[],
  patch: Pick<GroupPatch, "groupIndex" | "outputRows" | "newColumns">,
  /** Whether the form shows `field`; issues for hidden fields stay in `rest`. */
  isShown: (field: string) => boolean = () => true,
): SplitIssues {
  const fields: FieldErrors = {};
  const rest: Issue[] = [];
  const prefix = `groups.${patch.groupIndex}.`;
  for (const issue of issues) {
    const field = groupIssueField(issue.path, prefix, patch);
    if (field === null || !isShown(field)) rest.push(issue);
    else addError(fields, field, issue.message);
  }
  return { fields, rest };
}

function groupIssueField(
  path: string,
  prefix: string,
  patch: Pick<GroupPatch, "outputRows" | "newColumns">,
): string | null {
  const col = /^columns\.(\d+)(\.|$)/.exec(path);
  if (col) {
    const index = Number(col[1]);
    const added = patch.newColumns.find((n) => n.index === index);
    return added ? groupField.outputColumn(added.row) : null;
  }
  if (!path.startsWith(prefix)) return null;
  const [head, second, third] = path.slice(prefix.length).split(".");
  if (head === undefined) return null;
  if (head === "inputs") return second === undefined ? "inputs" : groupField.input(second);
  if (head === "outputs") {
    const row = second === undefined ? undefined : patch.outputRows[Number(second)];
    if (row === undefined) return "outputs";
    return third === "from" ? groupField.outputFrom(row) : groupField.outputColumn(row);
  }
  return GROUP_FIELDS[head] ?? null;
}

/**
 * A readable place for an issue the form could not pin to a field:
 * `groups.1.outputs.0.columnId` → `Group “Enrich”, output 1`.
 */
export function issuePlace(
  path: string,
  body: { columns?: readonly Column[]; groups?: readonly Group[] },
): string {
  const col = /^columns\.(\d+)(?:\.(\w+))?/.exec(path);
  if (col) {
    const c = body.columns?.[Number(col[1])];
    return c ? `Column “${c.name}”${col[2] ? ` (${col[2]})` : ""}` : path;
  }
  const grp = /^groups\.(\d+)(?:\.(\w+)(?:\.(\w+))?)?/.exec(path);
  if (grp) {
    const g = body.groups?.[Number(grp[1])];
    if (!g) return path;
    const what =
      grp[2] === "outputs" && grp[3] !== undefined
        ? `, output ${Number(grp[3]) + 1}`
        : grp[2]
          ? ` (${grp[2]})`
          : "";
    return `Group “${g.name}”${what}`;
  }
  if (path === "columns") return "Columns";
  if (path === "groups") return "Groups";
  return path;
}
