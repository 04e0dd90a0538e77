/**
 * Invariants of a table schema: column and group ids unique; every column a group names
 * exists (a waterfall's steps' inputs included); each output column has one owner; no
 * group waits on its own outputs; a group's run conditions (`runIf`) are column conditions
 * the where compiler takes, never on its own outputs; the "feeds" relation between groups
 * (through every column a group reads, its run conditions' included) has no cycle, so a
 * cascade always terminates; a waterfall has steps, and every output name it reads (its
 * outputs' `from`, its steps' `validate`) is one its steps produce.
 */
import type { Issue } from "@/contracts/common";
import type { Group, TableSchema, WaterfallGroup } from "@/contracts/table";
import { findCycle } from "./graph";
import { validationValueProblem } from "./waterfall";
import { checkWhere } from "./where";

function duplicates(ids: string[]): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const id of ids) (seen.has(id) ? dup : seen).add(id);
  return dup;
}

/**
 * A group's inputs for a row: each input name with its column's value (null when the row
 * has none). Own properties only, so an input named `__proto__` stays a key. The engine's
 * attempts and the dry run's cache keys read inputs this one way.
 */
export function groupInputs(
  group: { inputs: Readonly<Record<string, string>> },
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(group.inputs).map(([name, columnId]) => [name, data[columnId] ?? null]),
  );
}

/**
 * Whether a group is paid lookups (an enrichment, or a waterfall of them): what auto-run
 * holds back while the month's credits are spoken for.
 */
export function isLookupGroup(group: Pick<Group, "kind">): boolean {
  return group.kind === "enrichment" || group.kind === "waterfall";
}

/** The input mappings of a group: its own, or each of a waterfall's steps'. */
function inputMaps(group: Group): Readonly<Record<string, string>>[] {
  return group.kind === "waterfall" ? group.steps.map((s) => s.inputs) : [group.inputs];
}

/** The columns a group's inputs (every waterfall step's) and its dependencies name. */
function mappedColumns(group: Group): string[] {
  return [...inputMaps(group).flatMap((m) => Object.values(m)), ...group.dependsOn];
}

/**
 * Columns a group reads: its mapped inputs (every waterfall step's), its dependencies and
 * its run conditions' columns. Group order, the cycle check, the re-arm on edit and a
 * Stop's hold on auto-run all follow from this one list.
 */
export function columnsRead(group: Group): string[] {
  return [...new Set([...mappedColumns(group), ...(group.runIf ?? []).map((c) => c.column)])];
}

export function checkTableSchema(
  schema: TableSchema,
  knownEnrichments: ReadonlySet<string>,
): Issue[] {
  const issues: Issue[] = [];
  const columnIds = new Set(schema.columns.map((c) => c.id));
  for (const id of duplicates(schema.columns.map((c) => c.id))) {
    issues.push({ path: "columns", message: `column id "${id}" is used twice` });
  }
  for (const id of duplicates(schema.groups.map((g) => g.id))) {
    issues.push({ path: "groups", message: `group id "${id}" is used twice` });
  }

  const owner = new Map<string, string>();
  schema.groups.forEach((g, gi) => {
    g.outputs.forEach((o, oi) => {
      const path = `groups.${gi}.outputs.${oi}.columnId`;
      if (!columnIds.has(o.columnId)) {
        issues.push({ path, message: `unknown column "${o.columnId}"` });
        return;
      }
      const prev = owner.get(o.columnId);
      if (prev !== undefined && prev !== g.id) {
        issues.push({
          path,
          message: `column "${o.columnId}" is already an output of group "${prev}"`,
        });
      } else if (prev === g.id) {
        issues.push({ path, message: `column "${o.columnId}" is listed twice as an output` });
      }
      owner.set(o.columnId, g.id);
    });
    if (g.kind !== "waterfall") {
      for (const [name, col] of Object.entries(g.inputs)) {
        if (!columnIds.has(col)) {
          issues.push({ path: `groups.${gi}.inputs.${name}`, message: `unknown column "${col}"` });
        }
      }
    } else issues.push(...waterfallIssues(g, `groups.${gi}`, columnIds, knownEnrichments));
    g.dependsOn.forEach((col, di) => {
      if (!columnIds.has(col)) {
        issues.push({ path: `groups.${gi}.dependsOn.${di}`, message: `unknown column "${col}"` });
      }
    });
    if (g.kind === "enrichment" && !knownEnrichments.has(g.enrichmentId)) {
      issues.push({
        path: `groups.${gi}.enrichmentId`,
        message: `unknown enrichment "${g.enrichmentId}"`,
      });
    }
  });

  schema.groups.forEach((g, gi) => {
    const own = new Set(g.outputs.map((o) => o.columnId));
    issues.push(...runIfIssues(schema, g, gi, own));
    // The run conditions' columns were checked just above, each at its own path.
    for (const col of new Set(mappedColumns(g))) {
      if (own.has(col)) {
        issues.push({
          path: `groups.${gi}`,
          message: `group "${g.id}" reads its own output column "${col}"`,
        });
      }
    }
  });

  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  const cycle = findCycle(byId.keys(), (id) => {
    const g = byId.get(id);
    return g ? feeders(g, owner) : [];
  });
  if (cycle) {
    const flow = [...cycle].reverse().join(" → ");
    issues.push({ path: "groups", message: `dependency cycle: ${flow}` });
  }
  return issues;
}

/**
 * A group's run conditions: none on its own outputs (its cell would judge what it is about
 * to write), each one a valid column condition (the run `where` rules: known column, an
 * operator that fits its type, a value of that type). Issues at `groups.<i>.runIf.<j>`.
 */
function runIfIssues(
  schema: TableSchema,
  group: Group,
  gi: number,
  own: ReadonlySet<string>,
): Issue[] {
  const issues: Issue[] = [];
  (group.runIf ?? []).forEach((cond, j) => {
    const at = `groups.${gi}.runIf.${j}`;
    if (own.has(cond.column)) {
      issues.push({
        path: at,
        message: `group "${group.id}" may not run on a condition on its own output column "${cond.column}"`,
      });
      return;
    }
    const checked = checkWhere(schema, [cond], at);
    if (!checked.ok && "issues" in checked.reason)
      issues.push(
        ...checked.reason.issues.map((i) => ({ ...i, path: i.path.replace(`${at}.0`, at) })),
      );
  });
  return issues;
}

/** A waterfall's steps against the table's columns and the known enrichments. */
function waterfallIssues(
  g: WaterfallGroup,
  at: string,
  columnIds: ReadonlySet<string>,
  knownEnrichments: ReadonlySet<string>,
): Issue[] {
  const issues: Issue[] = [];
  if (g.steps.length === 0)
    issues.push({ path: `${at}.steps`, message: "a waterfall needs at least one step" });
  const produced = new Set(g.steps.flatMap((s) => Object.keys(s.outputs)));
  g.steps.forEach((step, si) => {
    const sp = `${at}.steps.${si}`;
    if ("enrichmentId" in step && !knownEnrichments.has(step.enrichmentId))
      issues.push({
        path: `${sp}.enrichmentId`,
        message: `unknown enrichment "${step.enrichmentId}"`,
      });
    for (const [name, col] of Object.entries(step.inputs))
      if (!columnIds.has(col))
        issues.push({ path: `${sp}.inputs.${name}`, message: `unknown column "${col}"` });
    if (Object.keys(step.outputs).length === 0)
      issues.push({ path: `${sp}.outputs`, message: "a step maps at least one output" });
    (step.validate ?? []).forEach((v, vi) => {
      const vp = `${sp}.validate.${vi}`;
      if (!Object.hasOwn(step.outputs, v.output))
        issues.push({
          path: `${vp}.output`,
          message: `"${v.output}" is not an output of this step`,
        });
      const problem = validationValueProblem(v);
      if (problem) issues.push({ path: `${vp}.value`, message: problem });
    });
  });
  g.outputs.forEach((o, oi) => {
    if (!produced.has(o.from))
      issues.push({
        path: `${at}.outputs.${oi}.from`,
        message: `no step produces an output named "${o.from}"`,
      });
  });
  return issues;
}

/** The groups whose output columns this group reads. */
export function feeders(group: Group, owner: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const col of columnsRead(group)) {
    const o = owner.get(col);
    if (o !== undefined && o !== group.id) out.push(o);
  }
  return out;
}

/** Group ids in dependency order (feeders first); ties keep the schema's left-to-right order. */
export function groupOrder(schema: TableSchema): string[] {
  const owner = new Map<string, string>();
  for (const g of schema.groups) for (const o of g.outputs) owner.set(o.columnId, g.id);
  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string, path: Set<string>) => {
    if (seen.has(id) || path.has(id)) return;
    const g = byId.get(id);
    if (!g) return;
    path.add(id);
    for (const f of feeders(g, owner)) visit(f, path);
    path.delete(id);
    seen.add(id);
    out.push(id);
  };
  for (const g of schema.groups) visit(g.id, new Set());
  return out;
}

/** The group and every group it reads from, transitively (what a Stop of any of them holds). */
export function upstreamGroups(schema: TableSchema, groupId: string): string[] {
  const owner = new Map<string, string>();
  for (const g of schema.groups) for (const o of g.outputs) owner.set(o.columnId, g.id);
  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  const seen = new Set<string>();
  const visit = (id: string) => {
    const g = byId.get(id);
    if (seen.has(id) || !g) return;
    seen.add(id);
    for (const f of feeders(g, owner)) visit(f);
  };
  visit(groupId);
  return [...seen];
}
