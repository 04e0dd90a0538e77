"use client";
/**
 * The outputs of "Use in a table…": each row takes a block's result (`<blockId>` or
 * `<blockId>.<path>`) into a new column (named and typed here) or an existing column no
 * group fills.
 */
import type { Column } from "@/contracts/table";
import { FieldHint } from "../grid/editor-frame";
import {
  type FormErrors,
  NEW_COLUMN,
  NEW_COLUMN_TYPES,
  type NewColumnType,
  type OutputRow,
} from "./use-in-table-plan";

export function UseInTableOutputs(props: {
  rows: OutputRow[];
  columns: readonly Column[];
  blockIds: readonly string[];
  errors: FormErrors;
  onChange: (rows: OutputRow[]) => void;
}) {
  const { rows, columns, errors, onChange } = props;
  const edit = (key: string, patch: Partial<OutputRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const add = () => {
    const used = new Set(rows.map((r) => r.key));
    let n = rows.length;
    while (used.has(`o${n}`)) n++;
    const from = props.blockIds[props.blockIds.length - 1] ?? "";
    onChange([...rows, { key: `o${n}`, from, column: NEW_COLUMN, newName: from, newType: "json" }]);
  };
  return (
    <div className="editor-outputs">
      {rows.length === 0 && (
        <div className="editor-empty">No output: the group fills no column.</div>
      )}
      {rows.map((row, i) => (
        <div key={row.key} className="use-in-table-output" data-testid={`use-in-table-output-${i}`}>
          <div>
            <input
              className={`input editor-grow${errors[`from:${row.key}`] ? " invalid" : ""}`}
              aria-label="From (block id or block id.path)"
              list="use-in-table-blocks"
              data-testid={`use-in-table-from-${i}`}
              value={row.from}
              onChange={(e) => edit(row.key, { from: e.target.value })}
            />
            <FieldHint error={errors[`from:${row.key}`]} />
          </div>
          <span className="editor-arrow">→</span>
          <div className="stack editor-tight">
            <select
              className={`input editor-grow${errors[`column:${row.key}`] ? " invalid" : ""}`}
              aria-label="Into column"
              data-testid={`use-in-table-column-${i}`}
              value={row.column}
              onChange={(e) => edit(row.key, { column: e.target.value })}
            >
              <option value={NEW_COLUMN}>New column…</option>
              {columns.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.type})
                </option>
              ))}
            </select>
            {row.column === NEW_COLUMN && (
              <div className="row">
                <input
                  className="input editor-grow"
                  aria-label="New column's name"
                  placeholder="Column name"
                  data-testid={`use-in-table-new-name-${i}`}
                  value={row.newName}
                  onChange={(e) => edit(row.key, { newName: e.target.value })}
                />
                <select
                  className="input"
                  aria-label="New column's type"
                  data-testid={`use-in-table-new-type-${i}`}
                  value={row.newType}
                  onChange={(e) => edit(row.key, { newType: e.target.value as NewColumnType })}
                >
                  {NEW_COLUMN_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <FieldHint error={errors[`column:${row.key}`]} />
          </div>
          <button
            type="button"
            className="btn btn-ghost btn-small"
            aria-label="Remove this output"
            onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
          >
            ✕
          </button>
        </div>
      ))}
      <datalist id="use-in-table-blocks">
        {props.blockIds.map((id) => (
          <option key={id} value={id} />
        ))}
      </datalist>
      <div>
        <button
          type="button"
          className="btn btn-small"
          data-testid="use-in-table-add-output"
          onClick={add}
        >
          + Output
        </button>
      </div>
    </div>
  );
}
