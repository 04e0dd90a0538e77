"use client";
/**
 * "+ AI column": a prompt that reads the row's columns, the model that answers it, and the
 * columns its answer fills. Creating makes the workflow (one llm block), the output
 * columns and the group that ties them (`ai-column-plan.ts` says what, `ai-column-create.ts`
 * in which order and what a failure leaves). "Try on this row" previews the answer first.
 */
import { type FormEvent, useId, useRef, useState } from "react";
import type { TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import { AiOutputFields } from "./AiOutputFields";
import { AiPromptEditor } from "./AiPromptEditor";
import { AiTryRow } from "./AiTryRow";
import {
  type AiColumnCalls,
  createAiColumn,
  createFailureText,
  ensureWorkflow,
} from "./ai-column-create";
import {
  type AiColumnForm,
  type AiProvider,
  emptyAiForm,
  MODEL_SUGGESTIONS,
  PROVIDERS,
  planAiColumn,
} from "./ai-column-plan";
import { EditorModal, FieldHint, useRevealErrors } from "./editor-frame";
import type { RowView } from "./model";

/** The API calls creating an AI column makes on `tableId`. */
function callsFor(tableId: string): AiColumnCalls {
  return {
    createWorkflow: (body) => answer(api.POST("/api/workflows", { body })),
    updateWorkflow: (id, body) =>
      answer(api.PUT("/api/workflows/{id}", { params: { path: { id } }, body })),
    patchTable: (body) =>
      answer(api.PATCH("/api/tables/{id}", { params: { path: { id: tableId } }, body })),
  };
}

export function AiColumnDialog(props: {
  table: TableView;
  rows: readonly RowView[];
  selected: ReadonlySet<string>;
  onClose: () => void;
  onSaved: (table: TableView) => void;
}) {
  const { table, onClose, onSaved } = props;
  const ids = useId();
  const [form, setForm] = useState<AiColumnForm>(emptyAiForm);
  const [attempted, setAttempted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  /** The workflow a try or a failed create already saved: reused, never made twice. */
  const [workflowId, setWorkflowId] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const [errorTick, setErrorTick] = useState(0);
  useRevealErrors(formRef, errorTick);

  const planned = planAiColumn(table, form);
  const errors = planned.ok ? {} : planned.errors;
  const errorOf = (key: string) => (attempted ? errors[key] : undefined);
  const invalid = (key: string) => (errorOf(key) ? " invalid" : "");
  const update = (patch: Partial<AiColumnForm>) => setForm((f) => ({ ...f, ...patch }));
  const tableCalls = callsFor(table.id);

  /** The plan, or null after showing what to fix. */
  const checked = () => {
    setAttempted(true);
    if (planned.ok) return planned.plan;
    setErrorTick((t) => t + 1);
    return null;
  };

  const prepareTry = async () => {
    const plan = checked();
    if (!plan) return null;
    const id = await ensureWorkflow(tableCalls, plan, workflowId);
    setWorkflowId(id);
    return { plan, workflowId: id };
  };

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    const plan = checked();
    if (!plan) return;
    setBusy(true);
    setFailure(null);
    const outcome = await createAiColumn(tableCalls, table, plan, workflowId);
    setBusy(false);
    if (outcome.ok) {
      onSaved(outcome.table);
      return;
    }
    setWorkflowId(outcome.workflowId);
    setFailure(createFailureText(outcome, plan.workflow.name, describeError(outcome.error)));
    setErrorTick((t) => t + 1);
  };

  const hasErrors = attempted && !planned.ok;
  return (
    <EditorModal
      title="Add AI column"
      subtitle="Asks a language model about each row and writes its answer into new columns. It runs when you run it (Run ▾), not by itself."
      busy={busy}
      wide
      testId="ai-column-dialog"
      onClose={onClose}
    >
      <form ref={formRef} onSubmit={(e) => void create(e)} noValidate>
        {failure && (
          <div className="notice notice-error" role="alert" data-testid="ai-create-error">
            {failure}
            {workflowId && (
              <>
                {" "}
                <a href={`/workflows/${encodeURIComponent(workflowId)}`}>Open the workflow</a>
              </>
            )}
          </div>
        )}
        <div className="field">
          <label htmlFor={`${ids}-name`}>Name</label>
          <input
            id={`${ids}-name`}
            name="name"
            className={`input${invalid("name")}`}
            value={form.name}
            maxLength={200}
            placeholder="e.g. Industry"
            onChange={(e) => update({ name: e.target.value })}
          />
          <FieldHint error={errorOf("name")} help="The group’s name, shown above its columns." />
        </div>

        <AiPromptEditor
          id={`${ids}-prompt`}
          value={form.prompt}
          columns={table.columns}
          error={errorOf("prompt")}
          onChange={(prompt) => update({ prompt })}
        />

        <div className="editor-pair">
          <div className="field">
            <label htmlFor={`${ids}-provider`}>Provider</label>
            <select
              id={`${ids}-provider`}
              name="provider"
              className="input"
              value={form.provider}
              onChange={(e) => {
                const provider = PROVIDERS.find((p) => p.id === e.target.value)?.id;
                if (provider) changeProvider(provider);
              }}
            >
              {PROVIDERS.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.label}
                </option>
              ))}
            </select>
            <FieldHint
              help={`Uses the workspace secret ${form.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "LLM_API_KEY"}.`}
            />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-model`}>Model</label>
            <input
              id={`${ids}-model`}
              name="model"
              className={`input editor-mono${invalid("model")}`}
              list={`${ids}-models`}
              value={form.model}
              maxLength={200}
              spellCheck={false}
              autoComplete="off"
              onChange={(e) => update({ model: e.target.value })}
            />
            <datalist id={`${ids}-models`}>
              {MODEL_SUGGESTIONS[form.provider].map((m) => (
                <option key={m} value={m} />
              ))}
            </datalist>
            <FieldHint error={errorOf("model")} />
          </div>
        </div>

        <div className="editor-pair">
          <div className="field">
            <label htmlFor={`${ids}-temperature`}>Temperature</label>
            <input
              id={`${ids}-temperature`}
              name="temperature"
              className={`input${invalid("temperature")}`}
              inputMode="decimal"
              value={form.temperature}
              onChange={(e) => update({ temperature: e.target.value })}
            />
            <FieldHint
              error={errorOf("temperature")}
              help="0 answers the same row the same way, so repeated runs reuse the cached answer at no cost."
            />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-max-tokens`}>Max tokens</label>
            <input
              id={`${ids}-max-tokens`}
              name="maxTokens"
              className={`input${invalid("maxTokens")}`}
              inputMode="numeric"
              value={form.maxTokens}
              placeholder="1024"
              onChange={(e) => update({ maxTokens: e.target.value })}
            />
            <FieldHint error={errorOf("maxTokens")} help="The longest answer; blank: 1,024." />
          </div>
        </div>

        <details className="ai-advanced" open={form.system !== "" || form.baseUrl !== ""}>
          <summary>System prompt and endpoint</summary>
          <div className="field">
            <label htmlFor={`${ids}-system`}>System prompt (optional)</label>
            <textarea
              id={`${ids}-system`}
              name="system"
              className={`input${invalid("system")}`}
              rows={3}
              value={form.system}
              placeholder="e.g. You are a careful analyst. Answer tersely."
              onChange={(e) => update({ system: e.target.value })}
            />
            <FieldHint
              error={errorOf("system")}
              help="Sent as written, ahead of the prompt, to every row alike."
            />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-base-url`}>Endpoint (optional)</label>
            <input
              id={`${ids}-base-url`}
              name="baseUrl"
              className={`input editor-mono${invalid("baseUrl")}`}
              value={form.baseUrl}
              spellCheck={false}
              autoComplete="off"
              placeholder="https://api.example.com/v1"
              onChange={(e) => update({ baseUrl: e.target.value })}
            />
            <FieldHint
              error={errorOf("baseUrl")}
              help="Another service that speaks the provider’s API; blank: the provider’s own."
            />
          </div>
        </details>

        <AiOutputFields
          ids={ids}
          form={form}
          errorOf={errorOf}
          onChange={(fields) => update({ fields })}
        />

        <AiTryRow
          rows={props.rows}
          selected={props.selected}
          columns={table.columns}
          model={form.model.trim()}
          disabled={busy}
          prepare={prepareTry}
        />

        <div className="editor-footer">
          {hasErrors && <span className="field-error">Fix the fields marked in red.</span>}
          <div className="spacer" />
          <button type="button" className="btn" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" data-testid="ai-create" disabled={busy}>
            {busy ? "Creating…" : "Create AI column"}
          </button>
        </div>
      </form>
    </EditorModal>
  );

  function changeProvider(provider: AiProvider) {
    setForm((f) => ({
      ...f,
      provider,
      // A suggested model of the other provider follows the switch; a typed one stays.
      model: MODEL_SUGGESTIONS[f.provider].includes(f.model)
        ? (MODEL_SUGGESTIONS[provider][0] ?? f.model)
        : f.model,
    }));
  }
}
