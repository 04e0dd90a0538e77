"use client";
/**
 * The group editor's inputs section: one column picker per input of the chosen source
 * (or, when the source could not be loaded, per input already mapped).
 */
import type { TableView } from "@/contracts/table";
import { FieldHint } from "./editor-frame";
import { columnLabel, groupField } from "./group-form";
import type { GroupFormState } from "./use-group-form";

/** Which column feeds each input of the source. */
export function GroupInputs({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const { form, errorOf, invalid, sourceLoading, shownInputs, sourceInputs, update } = state;
  // A waterfall's inputs are mapped step by step (WaterfallSteps).
  if (form.kind === "waterfall") return null;
  return (
    <section className="editor-section" aria-labelledby={`${ids}-inputs`}>
      <h3 id={`${ids}-inputs`}>Inputs</h3>
      <p className="editor-help">
        Which column feeds each input, row by row. <span className="editor-req">*</span> marks
        required inputs: rows where that column is empty are skipped.
      </p>
      {errorOf("inputs") && <div className="field-error">{errorOf("inputs")}</div>}
      {form.kind === "workflow" && form.workflowId === "" ? (
        <div className="editor-empty">Choose a workflow to map its inputs.</div>
      ) : form.kind === "enrichment" && form.enrichmentId === "" ? (
        <div className="editor-empty">Choose an enrichment to map its inputs.</div>
      ) : sourceLoading ? (
        <div className="editor-empty">Loading inputs…</div>
      ) : shownInputs.length === 0 ? (
        <div className="editor-empty">
          {sourceInputs ? "This takes no inputs." : "No inputs mapped."}
        </div>
      ) : (
        <div className="editor-map">
          {!sourceInputs && (
            <div className="notice notice-warn editor-map-note">
              The inputs could not be loaded; saving keeps the mappings below.
            </div>
          )}
          {shownInputs.map((input) => {
            const key = groupField.input(input.name);
            const selectId = `${ids}-in-${input.name}`;
            return (
              <div key={input.name} className="editor-map-row">
                <label htmlFor={selectId} className="editor-map-name">
                  <code>{input.name}</code>
                  {input.required && <span className="editor-req">*</span>}
                  {input.type && <span className="type">{input.type}</span>}
                  {input.description && <span className="editor-help">{input.description}</span>}
                </label>
                <span className="editor-arrow" aria-hidden="true">
                  ←
                </span>
                <div>
                  <select
                    id={selectId}
                    name={`input.${input.name}`}
                    className={`input editor-grow${invalid(key)}`}
                    value={form.inputs[input.name] ?? ""}
                    onChange={(e) =>
                      update({ inputs: { ...form.inputs, [input.name]: e.target.value } }, key)
                    }
                  >
                    <option value="">{input.required ? "Choose a column…" : "Not mapped"}</option>
                    {table.columns.map((c) => (
                      <option key={c.id} value={c.id}>
                        {columnLabel(c)} · {c.type}
                      </option>
                    ))}
                  </select>
                  <FieldHint error={errorOf(key)} />
                </div>
              </div>
            );
          })}
        </div>
      )}
    </section>
  );
}
