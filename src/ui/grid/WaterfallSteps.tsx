"use client";
/**
 * The group editor's waterfall steps: per step, what it runs (an enrichment or a
 * workflow, from the same catalogues as the other groups' pickers), which column feeds
 * each of its inputs, which of its outputs gives each of the group's output names, and
 * the checks its answer must pass to win; steps can be added, removed and reordered.
 */
import type { TableView } from "@/contracts/table";
import { FieldHint } from "./editor-frame";
import { columnLabel, credits } from "./group-form";
import type { GroupFormState } from "./use-group-form";
import {
  checkRow,
  type StepForm,
  stepField,
  stepSource,
  WATERFALL_OPS,
  waterfallOutputNames,
} from "./waterfall-form";

export function WaterfallSteps({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const { form, errorOf, addStep } = state;
  return (
    <section className="editor-section" aria-labelledby={`${ids}-steps`}>
      <h3 id={`${ids}-steps`}>Steps</h3>
      <p className="editor-help">
        Tried in order on each row until one finds an answer that passes its checks (by default: the
        first output is not empty). A step that answered is charged, even when its checks fail.
      </p>
      {errorOf("source") && <div className="field-error">{errorOf("source")}</div>}
      <ol className="stack" data-testid="waterfall-steps">
        {form.steps.map((step, i) => (
          <StepEditor
            key={step.key}
            ids={ids}
            table={table}
            state={state}
            step={step}
            index={i}
            last={i === form.steps.length - 1}
          />
        ))}
      </ol>
      <div className="row editor-actions">
        <button type="button" className="btn btn-small" onClick={addStep}>
          + Add step
        </button>
      </div>
    </section>
  );
}

function StepEditor(props: {
  ids: string;
  table: TableView;
  state: GroupFormState;
  step: StepForm;
  index: number;
  last: boolean;
}) {
  const { ids, table, state, step, index, last } = props;
  const { form, errorOf, invalid, enrichments, workflows, updateStep, removeStep, moveStep } =
    state;
  const source = stepSource(step);
  const enrichment =
    source?.kind === "enrichment" && enrichments.state === "ready"
      ? enrichments.value.find((e) => e.id === source.id)
      : undefined;
  const workflow =
    source?.kind === "workflow" && workflows.state === "ready"
      ? workflows.value.find((w) => w.id === source.id)
      : undefined;
  const inputs = enrichment
    ? enrichment.inputs.map((x) => ({ name: x.id, required: x.required }))
    : workflow
      ? workflow.definition.inputs.map((x) => ({ name: x.name, required: x.required ?? false }))
      : Object.keys(step.inputs).map((name) => ({ name, required: false }));
  const names = waterfallOutputNames(form);
  const n = index + 1;
  const at = `${ids}-step${step.key}`;
  return (
    <li className="editor-section" data-testid="waterfall-step">
      <div className="row">
        <strong>Step {n}</strong>
        <div className="spacer" />
        <button
          type="button"
          className="btn btn-ghost btn-small"
          aria-label={`Move step ${n} up`}
          disabled={index === 0}
          onClick={() => moveStep(step.key, -1)}
        >
          ↑
        </button>
        <button
          type="button"
          className="btn btn-ghost btn-small"
          aria-label={`Move step ${n} down`}
          disabled={last}
          onClick={() => moveStep(step.key, 1)}
        >
          ↓
        </button>
        <button
          type="button"
          className="btn btn-ghost btn-small"
          aria-label={`Remove step ${n}`}
          onClick={() => removeStep(step.key)}
        >
          ✕
        </button>
      </div>
      <div className="field">
        <label htmlFor={`${at}-source`}>Runs</label>
        <select
          id={`${at}-source`}
          name={`steps.${index}.source`}
          className={`input${invalid(stepField.source(step.key))}`}
          value={step.source}
          onChange={(e) => updateStep(step.key, { source: e.target.value, inputs: {} })}
        >
          <option value="">Choose an enrichment or a workflow…</option>
          {enrichments.state === "ready" && (
            <optgroup label="Enrichments">
              {enrichments.value.map((e) => (
                <option key={e.id} value={`enrichment:${e.id}`}>
                  {e.name}
                  {e.cost > 0 ? ` — ${credits(e.cost)} per answer` : " — free"}
                </option>
              ))}
            </optgroup>
          )}
          {workflows.state === "ready" && workflows.value.length > 0 && (
            <optgroup label="Workflows">
              {workflows.value.map((w) => (
                <option key={w.id} value={`workflow:${w.id}`}>
                  {w.name}
                </option>
              ))}
            </optgroup>
          )}
        </select>
        <FieldHint
          error={errorOf(stepField.source(step.key))}
          help={
            source?.kind === "workflow"
              ? "A workflow step may not have approval or wait blocks."
              : enrichment?.description
          }
        />
      </div>
      {inputs.length > 0 && (
        <div className="editor-outputs">
          {inputs.map((input) => (
            <div key={input.name} className="editor-output">
              <code>
                {input.name}
                {input.required ? " *" : ""}
              </code>
              <span className="editor-arrow" aria-hidden="true">
                ←
              </span>
              <select
                className="input editor-grow"
                aria-label={`Step ${n} input ${input.name}: column`}
                value={step.inputs[input.name] ?? ""}
                onChange={(e) =>
                  updateStep(step.key, { inputs: { ...step.inputs, [input.name]: e.target.value } })
                }
              >
                <option value="">Not mapped</option>
                {table.columns.map((c) => (
                  <option key={c.id} value={c.id}>
                    {columnLabel(c)}
                  </option>
                ))}
              </select>
            </div>
          ))}
        </div>
      )}
      {names.length === 0 ? (
        <div className="editor-empty">Name the group’s outputs below to map this step’s.</div>
      ) : (
        <div className="editor-outputs">
          {names.map((name) => (
            <div key={name} className="editor-output">
              <code>{name}</code>
              <span className="editor-arrow" aria-hidden="true">
                ←
              </span>
              {enrichment ? (
                <select
                  className="input editor-grow"
                  aria-label={`Step ${n} output for ${name}`}
                  value={step.outputs[name] ?? ""}
                  onChange={(e) =>
                    updateStep(step.key, { outputs: { ...step.outputs, [name]: e.target.value } })
                  }
                >
                  <option value="">Not mapped</option>
                  {enrichment.outputs.map((o) => (
                    <option key={o.id} value={o.id}>
                      {o.id} ({o.type})
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  className="input editor-grow editor-mono"
                  aria-label={`Step ${n} output for ${name}`}
                  value={step.outputs[name] ?? ""}
                  spellCheck={false}
                  placeholder="blockId or blockId.path"
                  onChange={(e) =>
                    updateStep(step.key, { outputs: { ...step.outputs, [name]: e.target.value } })
                  }
                />
              )}
            </div>
          ))}
          <FieldHint error={errorOf(stepField.outputs(step.key))} />
        </div>
      )}
      <StepChecks step={step} n={n} names={names} state={state} />
    </li>
  );
}

function StepChecks(props: { step: StepForm; n: number; names: string[]; state: GroupFormState }) {
  const { step, n, names, state } = props;
  const { updateStep } = state;
  const setChecks = (validate: StepForm["validate"]) => updateStep(step.key, { validate });
  return (
    <div className="stack editor-tight">
      {step.validate.map((v, j) => (
        <div key={v.key} className="row">
          <span className="muted">{j === 0 ? "Wins only if" : "and"}</span>
          <select
            className="input"
            aria-label={`Step ${n} check ${j + 1}: output`}
            value={v.output}
            onChange={(e) =>
              setChecks(
                step.validate.map((x) => (x.key === v.key ? { ...x, output: e.target.value } : x)),
              )
            }
          >
            <option value="">output…</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
          <select
            className="input"
            aria-label={`Step ${n} check ${j + 1}: operator`}
            value={v.op}
            onChange={(e) => {
              const op = WATERFALL_OPS.find((o) => o === e.target.value) ?? "not_empty";
              setChecks(step.validate.map((x) => (x.key === v.key ? { ...x, op } : x)));
            }}
          >
            {WATERFALL_OPS.map((op) => (
              <option key={op} value={op}>
                {op.replace("_", " ")}
              </option>
            ))}
          </select>
          {v.op !== "empty" && v.op !== "not_empty" && (
            <input
              className="input"
              aria-label={`Step ${n} check ${j + 1}: value`}
              value={v.value}
              onChange={(e) =>
                setChecks(
                  step.validate.map((x) => (x.key === v.key ? { ...x, value: e.target.value } : x)),
                )
              }
            />
          )}
          <button
            type="button"
            className="btn btn-ghost btn-small"
            aria-label={`Remove step ${n} check ${j + 1}`}
            onClick={() => setChecks(step.validate.filter((x) => x.key !== v.key))}
          >
            ✕
          </button>
        </div>
      ))}
      <div className="row">
        <button
          type="button"
          className="btn btn-small"
          disabled={names.length === 0}
          onClick={() => setChecks([...step.validate, checkRow(names[0] ?? "")])}
        >
          + Add check
        </button>
      </div>
    </div>
  );
}
