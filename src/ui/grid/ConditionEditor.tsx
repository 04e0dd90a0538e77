"use client";
/**
 * One `where` condition, built in a line of controls: a column (then an operator that fits
 * its type and a value of that type) or a group (then the status its cell must have, or
 * the outcome it completed with). The condition is checked with the API's own rules
 * (domain/where.ts) before it is handed on, so what the filter bar or a run sends is never
 * refused for its shape. Shared by the filter bar, Run ▾ › matching… and the group
 * editor's run condition (`columns`: column conditions only, on the columns given).
 */
import { useState } from "react";
import type { Column, TableView } from "@/contracts/table";
import type { ColumnCondition, WhereCondition, WhereOp } from "@/contracts/where";
import { CELL_OUTCOMES, CELL_STATUSES, type CellOutcome, type CellStatus } from "@/domain/statuses";
import { checkWhere, opsFor } from "@/domain/where";
import { opWords, outcomeWords, statusWords } from "./row-query";
import { parseInput } from "./values";

const NEVER_RUN = "never";
/** The status select's value for "completed with this outcome". */
const OUTCOME = "outcome:";

/** The group condition the status select's value stands for. */
function groupCondition(group: string, choice: string): WhereCondition {
  if (choice.startsWith(OUTCOME))
    return { group, outcome: choice.slice(OUTCOME.length) as CellOutcome };
  return { group, status: choice === NEVER_RUN ? null : (choice as CellStatus) };
}

/** The value typed for a column condition (none for empty/not_empty), or why there is none. */
function conditionValue(
  column: Column,
  op: WhereOp,
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string } {
  if (op === "empty" || op === "not_empty") return { ok: true, value: undefined };
  if (op === "contains" && column.type === "text") return { ok: true, value: text };
  if (op === "contains" && column.type === "json") {
    // An element of an array: JSON when it reads as JSON, else the text itself.
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      return { ok: true, value: text };
    }
  }
  const parsed = parseInput(column, text);
  return parsed.ok ? parsed : { ok: false, message: parsed.message };
}

export function ConditionEditor({
  table,
  submitLabel,
  columns,
  embedded,
  onSubmit,
  onCancel,
}: {
  table: TableView;
  submitLabel: string;
  /** Only column conditions, on these columns (a run condition); default: any column or group. */
  columns?: readonly Column[];
  /** Inside another form (the group editor): a line of controls, not a form of its own. */
  embedded?: boolean;
  onSubmit(cond: WhereCondition): void;
  onCancel?(): void;
}) {
  const offered = columns ?? table.columns;
  const groups = columns ? [] : table.groups;
  const [field, setField] = useState(() =>
    offered[0] ? `c:${offered[0].id}` : `g:${groups[0]?.id ?? ""}`,
  );
  const [op, setOp] = useState<WhereOp>("eq");
  const [text, setText] = useState("");
  const [status, setStatus] = useState<string>("error");
  const [error, setError] = useState<string | null>(null);

  const column = field.startsWith("c:") ? offered.find((c) => c.id === field.slice(2)) : undefined;
  const groupId = field.startsWith("g:") ? field.slice(2) : null;
  const ops = column ? opsFor(column.type) : [];
  const currentOp = ops.includes(op) ? op : (ops[0] ?? "eq");
  const takesValue = currentOp !== "empty" && currentOp !== "not_empty";

  const submit = () => {
    let cond: WhereCondition;
    if (groupId !== null) {
      cond = groupCondition(groupId, status);
    } else if (column) {
      const value = conditionValue(column, currentOp, text);
      if (!value.ok) {
        setError(value.message);
        return;
      }
      const made: ColumnCondition = { column: column.id, op: currentOp };
      if (value.value !== undefined) made.value = value.value as ColumnCondition["value"];
      cond = made;
    } else return;
    const checked = checkWhere(table, [cond]);
    if (!checked.ok) {
      const issue = "issues" in checked.reason ? checked.reason.issues[0]?.message : null;
      setError(issue ?? checked.reason.message);
      return;
    }
    setError(null);
    setText("");
    onSubmit(cond);
  };

  const controls = (
    <>
      <select
        className="input"
        aria-label="Column or group"
        data-testid="condition-field"
        value={field}
        onChange={(e) => {
          setField(e.target.value);
          setError(null);
        }}
      >
        <optgroup label="Columns">
          {offered.map((c) => (
            <option key={c.id} value={`c:${c.id}`}>
              {c.name}
            </option>
          ))}
        </optgroup>
        {groups.length > 0 && (
          <optgroup label="Group status">
            {groups.map((g) => (
              <option key={g.id} value={`g:${g.id}`}>
                {g.name} (status)
              </option>
            ))}
          </optgroup>
        )}
      </select>
      {column && (
        <select
          className="input"
          aria-label="Condition"
          data-testid="condition-op"
          value={currentOp}
          onChange={(e) => setOp(e.target.value as WhereOp)}
        >
          {ops.map((o) => (
            <option key={o} value={o}>
              {opWords(o)}
            </option>
          ))}
        </select>
      )}
      {column && takesValue && (column.type === "boolean" || column.type === "select") && (
        <select
          className="input"
          aria-label="Value"
          data-testid="condition-value"
          value={text}
          onChange={(e) => setText(e.target.value)}
        >
          <option value="">Choose…</option>
          {(column.type === "boolean" ? ["true", "false"] : (column.options ?? [])).map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      )}
      {column && takesValue && column.type !== "boolean" && column.type !== "select" && (
        <input
          className={`input${error ? " invalid" : ""}`}
          aria-label="Value"
          data-testid="condition-value"
          placeholder={column.type === "date" ? "YYYY-MM-DD" : "value"}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setError(null);
          }}
          onKeyDown={(e) => {
            // Embedded, Enter adds the condition instead of submitting the form around it.
            if (embedded && e.key === "Enter") {
              e.preventDefault();
              submit();
            }
          }}
        />
      )}
      {groupId !== null && (
        <select
          className="input"
          aria-label="Status"
          data-testid="condition-status"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
        >
          {CELL_STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusWords(s)}
            </option>
          ))}
          <option value={NEVER_RUN}>never run</option>
          <optgroup label="Completed with">
            {CELL_OUTCOMES.map((o) => (
              <option key={o} value={`${OUTCOME}${o}`}>
                {outcomeWords(o)}
              </option>
            ))}
          </optgroup>
        </select>
      )}
      <button
        type={embedded ? "button" : "submit"}
        className="btn btn-small"
        data-testid="condition-add"
        onClick={embedded ? submit : undefined}
      >
        {submitLabel}
      </button>
      {onCancel && (
        <button type="button" className="btn btn-small btn-ghost" onClick={onCancel}>
          Cancel
        </button>
      )}
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </>
  );
  // A form inside the group editor's form would submit the group: a line of controls there.
  if (embedded)
    return (
      <div className="condition-editor" data-testid="condition-editor">
        {controls}
      </div>
    );
  return (
    <form
      className="condition-editor"
      data-testid="condition-editor"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      {controls}
    </form>
  );
}
