"use client";
/**
 * The side form's inputs, one per kind of field (block-fields.ts). Each writes its value
 * through `onValue` (undefined: remove the key) and shows, under itself, the problem it
 * sees in its own text (not a number, out of bounds, JSON that does not parse) or else
 * the schema's issues for it. Inputs whose text is not the value itself (numbers, JSON,
 * a record's rows) keep the text as typed and take the value again when it changes from
 * elsewhere (the JSON view, undo).
 */
import { type ReactNode, useState } from "react";
import type { BlockField, NumberBounds } from "./block-fields";
import {
  fieldKey,
  numberProblem,
  readNumber,
  readNumberOrExpression,
  textValue,
} from "./block-values";
import type { ExpressionScope } from "./expression-check";
import { ExpressionInput } from "./expression-input";
import { parseJsonText } from "./json-text";

export interface FieldProps {
  field: BlockField;
  value: unknown;
  onValue: (value: unknown) => void;
  issues: readonly string[];
  /** The element id prefix of this form. */
  ids: string;
  help?: string;
  scope: ExpressionScope;
}

export const inputId = (ids: string, field: BlockField) => `${ids}-${fieldKey(field.path)}`;

/** The label, the input, the help and the issues (`form-issue-<field>`). */
export function FieldFrame(props: {
  field: BlockField;
  ids: string;
  help?: string;
  issues: readonly string[];
  children: ReactNode;
}) {
  const { field, issues } = props;
  const key = fieldKey(field.path);
  return (
    <div className="field form-field">
      <label htmlFor={inputId(props.ids, field)}>
        {field.name}
        {/* Inside an optional group (retry) a field is only required once the group is set. */}
        {field.required && !field.path.includes(".") ? (
          <span className="form-required"> (required)</span>
        ) : null}
      </label>
      {props.children}
      {props.help ? <span className="muted form-help">{props.help}</span> : null}
      {issues.length > 0 && (
        <div className="field-error" data-testid={`form-issue-${key}`}>
          {issues.join("; ")}
        </div>
      )}
    </div>
  );
}

/**
 * Text as typed, taken again from `value` when the value changes from elsewhere to one
 * the text does not already mean (`means`).
 */
function useTextOf(
  value: unknown,
  format: (v: unknown) => string,
  means: (text: string) => boolean,
) {
  const [text, setText] = useState(() => format(value));
  const key = JSON.stringify(value) ?? "";
  const [seen, setSeen] = useState(key);
  if (key !== seen) {
    setSeen(key);
    if (!means(text)) setText(format(value));
  }
  return [text, setText] as const;
}

const shown = (v: unknown) =>
  v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);

export function TextField(
  props: FieldProps & { multiline: boolean; mode?: "expression" | "template" },
) {
  const { field, value, onValue, mode } = props;
  const text = typeof value === "string" ? value : shown(value);
  const set = (t: string) => onValue(textValue(t, field.required));
  const id = inputId(props.ids, field);
  const testKey = fieldKey(field.path);
  return (
    <FieldFrame {...props}>
      {mode ? (
        <ExpressionInput
          testId={testKey}
          id={id}
          value={text}
          onChange={set}
          mode={mode}
          multiline={props.multiline}
          scope={props.scope}
          invalid={props.issues.length > 0}
        />
      ) : props.multiline ? (
        <textarea
          id={id}
          rows={3}
          className="input"
          data-testid={`form-${testKey}`}
          value={text}
          onChange={(e) => set(e.target.value)}
        />
      ) : (
        <input
          id={id}
          type="text"
          className="input"
          data-testid={`form-${testKey}`}
          value={text}
          onChange={(e) => set(e.target.value)}
        />
      )}
    </FieldFrame>
  );
}

export function NumberField(props: FieldProps & { bounds: NumberBounds }) {
  const { field, value, onValue, bounds } = props;
  const [text, setText] = useTextOf(value, shown, (t) => {
    const r = readNumber(t);
    return r.ok && r.value === value;
  });
  const read = readNumber(text);
  const local = !read.ok
    ? read.message
    : read.value === undefined
      ? null
      : numberProblem(read.value, bounds);
  const range =
    bounds.min !== null && bounds.max !== null
      ? `${bounds.min.toLocaleString("en-US")}–${bounds.max.toLocaleString("en-US")}`
      : undefined;
  return (
    <FieldFrame {...props} issues={local ? [local] : props.issues}>
      <input
        id={inputId(props.ids, field)}
        type="text"
        inputMode={bounds.int ? "numeric" : "decimal"}
        className={`input${local || props.issues.length > 0 ? " invalid" : ""}`}
        data-testid={`form-${fieldKey(field.path)}`}
        placeholder={range}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const r = readNumber(e.target.value);
          if (r.ok) onValue(r.value);
        }}
      />
    </FieldFrame>
  );
}

/** wait's `ms`: milliseconds, or an expression giving them. */
export function NumberOrExpressionField(props: FieldProps & { bounds: NumberBounds }) {
  const { field, value, onValue, bounds } = props;
  const [text, setText] = useTextOf(value, shown, (t) => readNumberOrExpression(t) === value);
  const read = readNumberOrExpression(text);
  const local = typeof read === "number" ? numberProblem(read, bounds) : null;
  return (
    <FieldFrame {...props} issues={local ? [local] : props.issues}>
      <ExpressionInput
        testId={fieldKey(field.path)}
        id={inputId(props.ids, field)}
        value={text}
        onChange={(t) => {
          setText(t);
          onValue(readNumberOrExpression(t));
        }}
        mode="number-or-expression"
        multiline={false}
        scope={props.scope}
        placeholder="milliseconds, or an expression such as inputs.delayMs"
        invalid={local !== null || props.issues.length > 0}
      />
    </FieldFrame>
  );
}

export function EnumField(props: FieldProps & { options: readonly string[] }) {
  const { field, value, onValue } = props;
  const current = typeof value === "string" ? value : "";
  const known = props.options.includes(current) || current === "";
  return (
    <FieldFrame {...props}>
      <select
        id={inputId(props.ids, field)}
        className="input"
        data-testid={`form-${fieldKey(field.path)}`}
        value={current}
        onChange={(e) => onValue(e.target.value === "" ? undefined : e.target.value)}
      >
        {(!field.required || current === "") && (
          <option value="">{field.required ? "Choose…" : "(default)"}</option>
        )}
        {!known && <option value={current}>{current} (not allowed)</option>}
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

export function BooleanField(props: FieldProps) {
  const { field, value, onValue } = props;
  return (
    <FieldFrame {...props}>
      <input
        id={inputId(props.ids, field)}
        type="checkbox"
        data-testid={`form-${fieldKey(field.path)}`}
        checked={value === true}
        onChange={(e) => onValue(e.target.checked ? true : field.required ? false : undefined)}
      />
    </FieldFrame>
  );
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Any JSON value (http body), or a JSON object (llm jsonSchema). */
export function JsonField(props: FieldProps & { object: boolean }) {
  const { field, value, onValue } = props;
  const format = (v: unknown) => (v === undefined ? "" : JSON.stringify(v, null, 2));
  const [text, setText] = useTextOf(value, format, (t) => {
    const r = parseJsonText(t);
    return t.trim() === ""
      ? value === undefined
      : r.ok && JSON.stringify(r.value) === JSON.stringify(value);
  });
  const problemOf = (t: string): string | null => {
    if (t.trim() === "") return null;
    const r = parseJsonText(t);
    if (!r.ok) return `${r.error.message} (line ${r.error.line}, column ${r.error.column})`;
    return props.object && !isObject(r.value) ? "must be a JSON object { … }" : null;
  };
  const local = problemOf(text);
  const key = fieldKey(field.path);
  // The schema's issues are about the last value that parsed: while the text does not, its own error speaks.
  return (
    <FieldFrame {...props} issues={local ? [] : props.issues}>
      <textarea
        id={inputId(props.ids, field)}
        rows={4}
        spellCheck={false}
        className={`input form-code${local ? " invalid" : ""}`}
        data-testid={`form-${key}`}
        value={text}
        onChange={(e) => {
          const t = e.target.value;
          setText(t);
          if (t.trim() === "") onValue(field.required ? null : undefined);
          else if (problemOf(t) === null) {
            const r = parseJsonText(t);
            if (r.ok) onValue(r.value);
          }
        }}
      />
      {local && (
        <div className="field-error" data-testid={`form-${key}-error`}>
          {local}
        </div>
      )}
    </FieldFrame>
  );
}
