"use client";
/**
 * A `{ key: value }` field as rows (workflow and enrichment `inputs`, http `headers`):
 * each value an expression, a template or text. Rows are kept as typed — a row whose key
 * is still empty is not written, a repeated key is flagged — and an emptied optional
 * record removes its key. `expected` offers the keys the target wants (an enrichment's
 * inputs) in one click.
 */
import { useState } from "react";
import { fieldKey } from "./block-values";
import { ExpressionInput } from "./expression-input";
import { FieldFrame, type FieldProps, inputId } from "./form-fields";

interface Row {
  key: string;
  value: string;
}

const rowsOf = (value: unknown): Row[] =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.entries(value).map(([key, v]) => ({
        key,
        value: typeof v === "string" ? v : JSON.stringify(v),
      }))
    : [];

function recordOf(rows: readonly Row[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (const r of rows) if (r.key !== "") record[r.key] = r.value;
  return record;
}

export function MapField(
  props: FieldProps & { values: "expression" | "template" | "text"; expected?: readonly string[] },
) {
  const { field, value, onValue } = props;
  const key = fieldKey(field.path);
  const [rows, setRows] = useState(() => rowsOf(value));
  // Taken again when the record changes from elsewhere to one the rows do not already say.
  const external = JSON.stringify(value ?? {});
  const [seen, setSeen] = useState(external);
  if (external !== seen) {
    setSeen(external);
    if (JSON.stringify(recordOf(rows)) !== external) setRows(rowsOf(value));
  }

  const write = (next: Row[]) => {
    setRows(next);
    const record = recordOf(next);
    onValue(Object.keys(record).length === 0 && !field.required ? undefined : record);
  };
  const edit = (i: number, change: Partial<Row>) =>
    write(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));

  const keys = rows.map((r) => r.key);
  const repeated = keys.filter((k, i) => k !== "" && keys.indexOf(k) !== i);
  const local =
    repeated.length > 0 ? `${repeated.join(", ")}: listed twice (the last one counts)` : null;
  const missing = (props.expected ?? []).filter((k) => !keys.includes(k));
  const unread = props.expected ? keys.filter((k) => k !== "" && !props.expected?.includes(k)) : [];

  return (
    <FieldFrame {...props} issues={local ? [local, ...props.issues] : props.issues}>
      <div className="form-map" data-testid={`form-${key}`} id={inputId(props.ids, field)}>
        {rows.map((r, i) => (
          // Rows have no identity but their place while being typed.
          // biome-ignore lint/suspicious/noArrayIndexKey: a row's key is what is being edited
          <div className="form-map-row" key={i}>
            <input
              type="text"
              className="input form-map-key"
              aria-label={`${field.name} ${i + 1}: name`}
              placeholder="name"
              data-testid={`form-${key}-key-${i}`}
              value={r.key}
              onChange={(e) => edit(i, { key: e.target.value })}
            />
            {props.values === "text" ? (
              <input
                type="text"
                className="input"
                aria-label={`${field.name} ${r.key || i + 1}: value`}
                data-testid={`form-${key}-value-${i}`}
                value={r.value}
                onChange={(e) => edit(i, { value: e.target.value })}
              />
            ) : (
              <ExpressionInput
                testId={`${key}-value-${i}`}
                value={r.value}
                onChange={(v) => edit(i, { value: v })}
                mode={props.values}
                multiline={false}
                scope={props.scope}
                placeholder={
                  props.values === "expression" ? "e.g. row.email" : "text, {{ expression }}"
                }
              />
            )}
            <button
              type="button"
              className="btn btn-small btn-ghost"
              aria-label={`Remove ${field.name} ${r.key || i + 1}`}
              data-testid={`form-${key}-remove-${i}`}
              onClick={() => write(rows.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </div>
        ))}
        {unread.length > 0 && (
          <div className="form-warning" data-testid={`form-${key}-warning`}>
            not read by it: {unread.join(", ")} (it reads {props.expected?.join(", ") || "nothing"})
          </div>
        )}
        <div className="row">
          <button
            type="button"
            className="btn btn-small"
            data-testid={`form-${key}-add`}
            onClick={() => setRows([...rows, { key: "", value: "" }])}
          >
            Add {field.name === "headers" ? "a header" : "an entry"}
          </button>
          {missing.length > 0 && (
            <button
              type="button"
              className="btn btn-small"
              data-testid={`form-${key}-fill`}
              onClick={() => write([...rows, ...missing.map((k) => ({ key: k, value: "" }))])}
            >
              Add {missing.join(", ")}
            </button>
          )}
        </div>
      </div>
    </FieldFrame>
  );
}
