/**
 * API issues (`columns.3.name`, `groups.1.outputs.0.columnId`) as the editors use them:
 * the errors keyed by form field, the split between placed and unplaced issues, and a
 * readable place for the ones no field shows. The form-specific mappings live with
 * their forms (`columnIssues`, `groupIssues`).
 */
import type { Column, Group } from "@/contracts/table";
import type { Issue } from "../api";

/** Field name → message for the person filling the form. */
export type FieldErrors = Record<string, string>;

export interface SplitIssues {
  /** Issues about a field of the form being edited, keyed by field. */
  fields: FieldErrors;
  /** Everything else, for the notice at the top. */
  rest: Issue[];
}

/** Adds `message` to `field`'s error, joining distinct messages (several issues, one field). */
export function addError(errors: FieldErrors, field: string, message: string): void {
  const prev = errors[field];
  errors[field] = prev === undefined || prev === message ? message : `${prev}; ${message}`;
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
