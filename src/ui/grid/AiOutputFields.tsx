"use client";
/**
 * The AI column's output fields: each is a new column (its name, and text, number or
 * yes/no), filled from the model's answer. One text field takes the answer as it is;
 * otherwise the model answers JSON with one property per field.
 */
import {
  AI_FIELD_TYPES,
  type AiColumnForm,
  type AiField,
  type AiFieldType,
  aiFieldError,
  answerKey,
  answerShape,
  fieldColumnName,
  newAiField,
} from "./ai-column-plan";
import { FieldHint } from "./editor-frame";

const TYPE_LABEL: Record<AiFieldType, string> = {
  text: "Text",
  number: "Number",
  boolean: "Yes / no",
};

function shapeHelp(form: AiColumnForm): string {
  const named = form.fields.map((f) => ({ name: fieldColumnName(form, f), type: f.type }));
  if (answerShape(named).jsonSchema === null)
    return "The model’s answer, as text, fills the column.";
  const keys = named.map((f) => `${answerKey(f.name || "field")} (${f.type})`).join(", ");
  return `The model answers JSON with ${keys}; each fills its column.`;
}

export function AiOutputFields(props: {
  ids: string;
  form: AiColumnForm;
  errorOf: (key: string) => string | undefined;
  onChange: (fields: AiField[]) => void;
}) {
  const { ids, form, errorOf, onChange } = props;
  const edit = (key: string, patch: Partial<AiField>) =>
    onChange(form.fields.map((f) => (f.key === key ? { ...f, ...patch } : f)));
  const lone = form.fields.length === 1;
  return (
    <section className="editor-section" aria-labelledby={`${ids}-fields`}>
      <h3 id={`${ids}-fields`}>Output columns</h3>
      <p className="editor-help">{shapeHelp(form)}</p>
      {errorOf("fields") && <div className="field-error">{errorOf("fields")}</div>}
      <div className="editor-outputs">
        {form.fields.map((f, i) => {
          const err = errorOf(aiFieldError(f.key));
          return (
            <div key={f.key} className="ai-field" data-testid="ai-field">
              <div>
                <input
                  className={`input editor-grow${err ? " invalid" : ""}`}
                  aria-label={`Output ${i + 1}: column name`}
                  name={`fields.${i}.name`}
                  value={f.name}
                  maxLength={200}
                  placeholder={lone ? form.name.trim() || "Column name" : "Column name"}
                  onChange={(e) => edit(f.key, { name: e.target.value })}
                />
                <FieldHint
                  error={err}
                  help={lone && f.name.trim() === "" ? "Blank: the AI column’s name." : undefined}
                />
              </div>
              <select
                className="input"
                aria-label={`Output ${i + 1}: type`}
                name={`fields.${i}.type`}
                value={f.type}
                onChange={(e) => {
                  const type = AI_FIELD_TYPES.find((t) => t === e.target.value);
                  if (type) edit(f.key, { type });
                }}
              >
                {AI_FIELD_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {TYPE_LABEL[t]}
                  </option>
                ))}
              </select>
              <button
                type="button"
                className="btn btn-ghost btn-small"
                aria-label={`Remove output ${i + 1}`}
                title="Remove this output"
                disabled={lone}
                onClick={() => onChange(form.fields.filter((x) => x.key !== f.key))}
              >
                ✕
              </button>
            </div>
          );
        })}
      </div>
      <div className="row editor-actions">
        <button
          type="button"
          className="btn btn-small"
          data-testid="ai-add-field"
          onClick={() => onChange([...form.fields, newAiField()])}
        >
          + Add output
        </button>
      </div>
    </section>
  );
}
