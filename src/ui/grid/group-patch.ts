/**
 * Saving a group: the checks made before sending, the `PATCH /api/tables/:id` body built
 * from the form (new output columns included), and the API's issues on that body back
 * onto the form fields they are about, through the bookkeeping the body was built with.
 */
import type { EnrichmentView } from "@/contracts/enrichments";
import type { Column, Group, TableView } from "@/contracts/table";
import type { Issue } from "../api";
import { idFromName, idProblem } from "./editor-ids";
import {
  columnOwners,
  type GroupForm,
  groupField,
  keptInputs,
  NEW_COLUMN,
  newOutputColumnType,
  type SourceInput,
} from "./group-form";
import { addError, type FieldErrors, type SplitIssues } from "./issue-paths";
import { OUTPUT_NAME, stepField, stepFromForm, waterfallOutputNames } from "./waterfall-form";

/** A group output's `from`: `<blockId>`, `<blockId>.<path>` or an enrichment output id. */
export const OUTPUT_FROM = /^[a-z][a-z0-9_]{0,62}(\.[A-Za-z0-9_]+)*$/;

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
    else if (form.kind === "waterfall") {
      if (!OUTPUT_NAME.test(from))
        errors[fromKey] = "An output name: lower case letters, digits and _";
    } else if (opts.outputIds !== null && !opts.outputIds.includes(from))
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
  const runIfProblem = runIfIssue(form, columnIds);
  if (runIfProblem) errors.runIf = runIfProblem;
  return errors;
}

/** A run condition the API would refuse: on a column gone, or on one the group fills. */
function runIfIssue(form: GroupForm, columnIds: ReadonlySet<string>): string | null {
  const own = new Set(form.outputs.map((r) => r.column));
  for (const cond of form.runIf) {
    if (!columnIds.has(cond.column)) return "A condition’s column no longer exists";
    if (own.has(cond.column))
      return "A condition is on a column this group fills; it cannot run on its own output";
  }
  return null;
}

export interface GroupPatch {
  body: { columns: Column[]; groups: Group[] };
  /** Where the group sits in `body.groups`. */
  groupIndex: number;
  /** `body.groups[groupIndex].outputs[i]` came from the form row with key `outputRows[i]`. */
  outputRows: string[];
  /** Columns added for "New column…" rows: their index in `body.columns` and row key. */
  newColumns: { index: number; row: string }[];
  /** A waterfall's `steps[j]` came from the step form with key `stepRows[j]`. */
  stepRows?: string[];
}

export interface BuildGroupOptions {
  editingId?: string;
  /** The chosen source's input names, or null to keep every mapped input. */
  inputNames: readonly string[] | null;
  enrichment?: EnrichmentView | null;
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
    ...(form.runIf.length > 0 ? { runIf: form.runIf } : {}),
  };
  const { inputs: _, ...waterfallBase } = base;
  const names = waterfallOutputNames(form);
  const group: Group =
    form.kind === "workflow"
      ? { ...base, kind: "workflow", workflowId: form.workflowId, version: form.version }
      : form.kind === "enrichment"
        ? { ...base, kind: "enrichment", enrichmentId: form.enrichmentId }
        : {
            ...waterfallBase,
            kind: "waterfall",
            steps: form.steps.flatMap((s) => stepFromForm(s, names) ?? []),
          };
  const stepRows = form.steps.filter((s) => stepFromForm(s, names) !== null).map((s) => s.key);

  const at =
    opts.editingId === undefined ? -1 : table.groups.findIndex((g) => g.id === opts.editingId);
  const groups =
    at < 0 ? [...table.groups, group] : table.groups.map((g, i) => (i === at ? group : g));
  return {
    body: { columns, groups },
    groupIndex: at < 0 ? table.groups.length : at,
    outputRows,
    newColumns,
    ...(form.kind === "waterfall" ? { stepRows } : {}),
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
  runIf: "runIf",
};

/**
 * API issues for a group PATCH, onto the fields of the group being edited:
 * `groups.<g>.outputs.<i>.columnId` → that output row's column, `…from` → its `from`,
 * `groups.<g>.inputs.<name>` → that input, `groups.<g>.dependsOn[.<i>]` → dependencies,
 * and `columns.<n>.*` of a column the form added → the row that asked for it.
 */
export function groupIssues(
  issues: readonly Issue[],
  patch: Pick<GroupPatch, "groupIndex" | "outputRows" | "newColumns" | "stepRows">,
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
  patch: Pick<GroupPatch, "outputRows" | "newColumns" | "stepRows">,
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
  if (head === "steps") {
    const row = second === undefined ? undefined : patch.stepRows?.[Number(second)];
    if (row === undefined) return "source";
    return third === "outputs" || third === "validate"
      ? stepField.outputs(row)
      : stepField.source(row);
  }
  if (head === "inputs") return second === undefined ? "inputs" : groupField.input(second);
  if (head === "outputs") {
    const row = second === undefined ? undefined : patch.outputRows[Number(second)];
    if (row === undefined) return "outputs";
    return third === "from" ? groupField.outputFrom(row) : groupField.outputColumn(row);
  }
  return GROUP_FIELDS[head] ?? null;
}
