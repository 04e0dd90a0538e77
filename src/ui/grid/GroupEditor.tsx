"use client";
/**
 * The grid's group editor: a modal to add or edit a group — one workflow or enrichment
 * that runs per row, reads mapped input columns and writes its results into output
 * columns (existing ones, or new ones created in the same save). Saves with
 * `PATCH /api/tables/:id { columns, groups }` (full lists; an edited group keeps its
 * place) and hands the updated table to `onSaved`. Deleting a group keeps its columns.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import type { Column, Group, TableView } from "../../contracts/table";
import type { WorkflowView } from "../../contracts/workflow";
import { ApiError, api, describeError } from "../api";
import {
  EditorModal,
  type EditorNotice,
  FieldHint,
  NoticeError,
  noticeFor,
  useRevealErrors,
} from "./ColumnEditor";
import {
  addAllEnrichmentOutputs,
  applyEnrichmentChoice,
  applyWorkflowChoice,
  buildGroupPatch,
  columnOwners,
  defaultDependsOn,
  defaultFrom,
  type EnrichmentInfo,
  enrichmentInputs,
  type FieldErrors,
  type GroupForm,
  type GroupKind,
  type GroupPatch,
  groupField,
  groupFormFrom,
  groupIssues,
  idFromName,
  NEW_COLUMN,
  newOutputColumnType,
  type OutputRow,
  outputRow,
  type SourceInput,
  sameSet,
  suggestOutputName,
  uniqueName,
  validateGroupForm,
  workflowInputs,
} from "./editor-logic";

type Loadable<T> =
  | { state: "loading" }
  | { state: "ready"; value: T }
  | { state: "error"; message: string };

type WorkflowDetail = { id: string } & Loadable<WorkflowView>;

const BASE_FIELDS = [
  "name",
  "id",
  "kind",
  "source",
  "version",
  "inputs",
  "outputs",
  "dependsOn",
  "autoRun",
];

function credits(n: number): string {
  return `${n} credit${n === 1 ? "" : "s"}`;
}

function columnLabel(c: Column): string {
  return c.name === c.id ? c.name : `${c.name} (${c.id})`;
}

export function GroupEditor(props: {
  table: TableView;
  group?: Group;
  onClose: () => void;
  onSaved: (table: TableView) => void;
}) {
  const { table, group, onClose, onSaved } = props;
  const editing = group !== undefined;
  const ids = useId();
  const [form, setForm] = useState<GroupForm>(() => groupFormFrom(group));
  const [idTouched, setIdTouched] = useState(editing);
  // While untouched, the dependencies follow the mapped inputs.
  const [dependsTouched, setDependsTouched] = useState(
    () =>
      group !== undefined &&
      !sameSet(group.dependsOn, defaultDependsOn(groupFormFrom(group), table.columns, null)),
  );
  const [workflows, setWorkflows] = useState<Loadable<WorkflowView[]>>({ state: "loading" });
  const [enrichments, setEnrichments] = useState<Loadable<EnrichmentInfo[]>>({
    state: "loading",
  });
  const [detail, setDetail] = useState<WorkflowDetail | null>(null);
  /** The workflow a person just picked: its defaults apply once it has loaded. */
  const pickedWorkflow = useRef<string | null>(null);
  const [attempted, setAttempted] = useState(false);
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});
  const [notice, setNotice] = useState<EditorNotice | null>(null);
  const [busy, setBusy] = useState<"save" | "delete" | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const [errorTick, setErrorTick] = useState(0);
  useRevealErrors(formRef, errorTick);

  // The catalogues: workflows of the workspace and built-in enrichments.
  useEffect(() => {
    let live = true;
    const loadWorkflows = async () => {
      try {
        const r = await api<{ workflows: WorkflowView[] }>("GET", "/api/workflows");
        if (live) setWorkflows({ state: "ready", value: r.workflows });
      } catch (err) {
        if (live) setWorkflows({ state: "error", message: describeError(err) });
      }
    };
    const loadEnrichments = async () => {
      try {
        const r = await api<{ enrichments: EnrichmentInfo[] }>("GET", "/api/enrichments");
        if (live) setEnrichments({ state: "ready", value: r.enrichments });
      } catch (err) {
        if (live) setEnrichments({ state: "error", message: describeError(err) });
      }
    };
    void loadWorkflows();
    void loadEnrichments();
    return () => {
      live = false;
    };
  }, []);

  // The chosen workflow, for its inputs and block ids.
  const workflowId = form.kind === "workflow" ? form.workflowId : "";
  useEffect(() => {
    if (workflowId === "") return;
    let live = true;
    setDetail({ id: workflowId, state: "loading" });
    const load = async () => {
      try {
        const w = await api<WorkflowView>(
          "GET",
          `/api/workflows/${encodeURIComponent(workflowId)}`,
        );
        if (live) setDetail({ id: workflowId, state: "ready", value: w });
      } catch (err) {
        if (live) setDetail({ id: workflowId, state: "error", message: describeError(err) });
      }
    };
    void load();
    return () => {
      live = false;
    };
  }, [workflowId]);

  // A workflow a person picked fills in the inputs and a first output once loaded.
  useEffect(() => {
    if (detail?.state !== "ready" || pickedWorkflow.current !== detail.id) return;
    pickedWorkflow.current = null;
    setForm((f) => applyWorkflowChoice(f, detail.value, table.columns));
  }, [detail, table.columns]);

  // ------------------------------------------------------------------ derived state
  const workflow =
    form.kind === "workflow" && detail?.id === form.workflowId && detail.state === "ready"
      ? detail.value
      : null;
  const workflowFailed =
    form.kind === "workflow" && detail?.id === form.workflowId && detail.state === "error"
      ? detail.message
      : null;
  const enrichment =
    form.kind === "enrichment" && enrichments.state === "ready"
      ? (enrichments.value.find((e) => e.id === form.enrichmentId) ?? null)
      : null;
  const sourceInputs: SourceInput[] | null = workflow
    ? workflowInputs(workflow)
    : enrichment
      ? enrichmentInputs(enrichment)
      : null;
  const inputNames = sourceInputs?.map((i) => i.name) ?? null;
  const blocks = workflow?.definition.blocks ?? [];
  const blockIds = blocks.map((b) => b.id);
  const outputIds =
    form.kind === "enrichment" ? (enrichment?.outputs.map((o) => o.id) ?? null) : null;
  const sourceLoading =
    (form.kind === "workflow" &&
      form.workflowId !== "" &&
      (detail?.id !== form.workflowId || detail.state === "loading")) ||
    (form.kind === "enrichment" && enrichments.state === "loading");
  const listedWorkflow =
    workflows.state === "ready" ? workflows.value.find((w) => w.id === form.workflowId) : undefined;
  const deployedVersion = workflow?.deployedVersion ?? listedWorkflow?.deployedVersion ?? null;

  const groupId = idTouched
    ? form.id
    : form.name.trim() === ""
      ? ""
      : idFromName(
          form.name,
          table.groups.map((g) => g.id),
          "group",
        );
  const dependsOn = dependsTouched
    ? form.dependsOn
    : defaultDependsOn(form, table.columns, inputNames);
  const current: GroupForm = { ...form, id: groupId, dependsOn };
  const checks = validateGroupForm(table, current, {
    ...(group ? { editingId: group.id } : {}),
    inputs: sourceInputs,
    outputIds,
    blockIds: workflow ? blockIds : null,
  });
  const errorOf = (key: string): string | undefined =>
    serverErrors[key] ?? (attempted || (key === "id" && idTouched) ? checks[key] : undefined);

  const owners = columnOwners(table.groups, group?.id);
  const ownOutputs = new Set(form.outputs.map((r) => r.column));
  /** Inputs listed in the form: the source's, or (not loaded) the ones already mapped. */
  const shownInputs: SourceInput[] =
    sourceInputs ?? Object.keys(form.inputs).map((name) => ({ name, required: false }));
  const shownFields = new Set([
    ...BASE_FIELDS,
    ...shownInputs.map((i) => groupField.input(i.name)),
    ...form.outputs.flatMap((r) => [groupField.outputFrom(r.key), groupField.outputColumn(r.key)]),
  ]);
  const takenNames = (except?: string) => [
    ...table.columns.map((c) => c.name),
    ...form.outputs
      .filter((r) => r.key !== except && r.column === NEW_COLUMN)
      .map((r) => r.newName),
  ];

  // ------------------------------------------------------------------ editing
  const clearErrors = (...keys: string[]) => {
    if (keys.every((k) => serverErrors[k] === undefined)) return;
    setServerErrors((e) => {
      const next = { ...e };
      for (const k of keys) delete next[k];
      return next;
    });
  };
  const update = (patch: Partial<GroupForm>, ...keys: string[]) => {
    setForm((f) => ({ ...f, ...patch }));
    clearErrors(...keys);
  };
  const updateRow = (key: string, patch: Partial<OutputRow>, field: "from" | "column") => {
    setForm((f) => ({
      ...f,
      outputs: f.outputs.map((r) => (r.key === key ? { ...r, ...patch } : r)),
    }));
    clearErrors(field === "from" ? groupField.outputFrom(key) : groupField.outputColumn(key));
  };

  const chooseKind = (kind: GroupKind) => update({ kind }, "kind", "source");

  const chooseWorkflow = (id: string) => {
    pickedWorkflow.current = id === "" ? null : id;
    update({ workflowId: id }, "source");
  };

  const chooseEnrichment = (id: string) => {
    const picked =
      enrichments.state === "ready" ? enrichments.value.find((e) => e.id === id) : undefined;
    setForm((f) =>
      picked ? applyEnrichmentChoice(f, picked, table.columns) : { ...f, enrichmentId: id },
    );
    clearErrors("source");
  };

  /** A name for the new column of `row` (output `from`). */
  const newColumnName = (row: OutputRow, from: string): string => {
    const others = takenNames(row.key);
    if (form.kind === "workflow" && form.outputs.length === 1) {
      return uniqueName(form.name.trim() || workflow?.name || "Result", others);
    }
    return suggestOutputName(from || "output", form.name, others);
  };

  const addOutput = () => {
    const used = form.outputs.map((r) => r.from.trim());
    let from = "";
    if (form.kind === "workflow" && blocks.length > 0) from = defaultFrom(blocks, used);
    if (form.kind === "enrichment" && enrichment) {
      from = enrichment.outputs.find((o) => !used.includes(o.id))?.id ?? "";
    }
    const name =
      from === "" ? "" : suggestOutputName(from, form.name || enrichment?.name || "", takenNames());
    setForm((f) => ({
      ...f,
      outputs: [...f.outputs, outputRow(from, from === "" ? "" : NEW_COLUMN, name)],
    }));
  };

  const addAllOutputs = () => {
    if (!enrichment) return;
    setForm((f) => ({ ...f, outputs: addAllEnrichmentOutputs(f, enrichment, table.columns) }));
  };

  const removeOutput = (key: string) => {
    setForm((f) => ({ ...f, outputs: f.outputs.filter((r) => r.key !== key) }));
    clearErrors(groupField.outputFrom(key), groupField.outputColumn(key), "outputs");
  };

  const toggleDependency = (columnId: string) => {
    setDependsTouched(true);
    const next = dependsOn.includes(columnId)
      ? dependsOn.filter((c) => c !== columnId)
      : [...dependsOn, columnId];
    update({ dependsOn: next }, "dependsOn");
  };

  // ------------------------------------------------------------------ saving
  const tablePath = `/api/tables/${encodeURIComponent(table.id)}`;

  const send = async (kind: "save" | "delete", patch: GroupPatch): Promise<void> => {
    setBusy(kind);
    setNotice(null);
    setServerErrors({});
    try {
      const updated = await api<TableView>("PATCH", tablePath, patch.body);
      onSaved(updated);
    } catch (err) {
      const issues = err instanceof ApiError ? err.issues : [];
      const split =
        kind === "save"
          ? groupIssues(issues, patch, (f) => shownFields.has(f))
          : { fields: {}, rest: issues };
      setServerErrors(split.fields);
      setNotice(noticeFor(err, split.fields, split.rest, patch.body));
      setConfirmDelete(false);
      setErrorTick((t) => t + 1);
    } finally {
      setBusy(null);
    }
  };

  const save = (e: FormEvent) => {
    e.preventDefault();
    setAttempted(true);
    if (busy || sourceLoading) return;
    if (Object.keys(checks).length > 0) {
      setErrorTick((t) => t + 1);
      return;
    }
    const patch = buildGroupPatch(table, current, {
      ...(group ? { editingId: group.id } : {}),
      inputNames,
      enrichment,
    });
    void send("save", patch);
  };

  const remove = () => {
    if (!group) return;
    const groups = table.groups.filter((g) => g.id !== group.id);
    void send("delete", {
      body: { columns: table.columns, groups },
      groupIndex: -1,
      outputRows: [],
      newColumns: [],
    });
  };

  // ------------------------------------------------------------------ view
  const invalid = (key: string) => (errorOf(key) ? " invalid" : "");
  const hasChecks = Object.keys(checks).length > 0;
  const deletedOutputs = group
    ? group.outputs
        .map((o) => table.columns.find((c) => c.id === o.columnId)?.name ?? o.columnId)
        .join(", ")
    : "";

  return (
    <EditorModal
      title={editing ? `Edit group “${group.name}”` : "Add group"}
      subtitle="A group runs a workflow or an enrichment on each row, reading the columns mapped to its inputs and writing its results into output columns."
      busy={busy !== null}
      wide
      testId="group-editor"
      onClose={onClose}
    >
      <form ref={formRef} onSubmit={save} noValidate>
        <NoticeError notice={notice} />

        <div className="editor-pair">
          <div className="field">
            <label htmlFor={`${ids}-name`}>Name</label>
            <input
              id={`${ids}-name`}
              name="name"
              className={`input${invalid("name")}`}
              value={form.name}
              maxLength={200}
              placeholder="e.g. Enrich company"
              onChange={(e) => update({ name: e.target.value }, "name")}
            />
            <FieldHint error={errorOf("name")} help="Shown above the group’s columns." />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-id`}>ID</label>
            <input
              id={`${ids}-id`}
              name="id"
              className={`input editor-mono${invalid("id")}`}
              value={groupId}
              readOnly={editing}
              maxLength={63}
              spellCheck={false}
              autoComplete="off"
              placeholder="enrich_company"
              onChange={(e) => {
                setIdTouched(true);
                update({ id: e.target.value }, "id");
              }}
            />
            <FieldHint
              error={errorOf("id")}
              help={
                editing
                  ? "The id can’t change once the group exists."
                  : "Used by the API (runs, cells). Lowercase letters, digits and _; fixed once created."
              }
            />
          </div>
        </div>

        <div className="field">
          <span className="editor-label" id={`${ids}-kind`}>
            Runs
          </span>
          <div className="editor-segmented" role="radiogroup" aria-labelledby={`${ids}-kind`}>
            {(["workflow", "enrichment"] as const).map((k) => (
              <label key={k} className={form.kind === k ? "on" : ""}>
                <input
                  type="radio"
                  name={`${ids}-kind`}
                  value={k}
                  checked={form.kind === k}
                  onChange={() => chooseKind(k)}
                />
                {k === "workflow" ? "A workflow" : "An enrichment"}
              </label>
            ))}
          </div>
          <FieldHint
            error={errorOf("kind")}
            help={
              form.kind === "workflow"
                ? "One of your workflows, run once per row."
                : "A built-in lookup (e-mail domain, phone number, company data…), run once per row."
            }
          />
        </div>

        {form.kind === "workflow" ? (
          <div className="editor-pair editor-pair-wide">
            <div className="field">
              <label htmlFor={`${ids}-workflow`}>Workflow</label>
              {workflows.state === "loading" ? (
                <select id={`${ids}-workflow`} className="input" disabled>
                  <option>Loading workflows…</option>
                </select>
              ) : workflows.state === "error" ? (
                <div className="field-error">Couldn’t load workflows: {workflows.message}</div>
              ) : workflows.value.length === 0 ? (
                <div className="editor-empty">
                  No workflows yet. <a href="/workflows">Create one</a>, then come back.
                </div>
              ) : (
                <select
                  id={`${ids}-workflow`}
                  name="workflowId"
                  className={`input${invalid("source")}`}
                  value={form.workflowId}
                  onChange={(e) => chooseWorkflow(e.target.value)}
                >
                  <option value="">Choose a workflow…</option>
                  {workflows.value.map((w) => (
                    <option key={w.id} value={w.id}>
                      {w.name}
                    </option>
                  ))}
                  {form.workflowId !== "" && !listedWorkflow && (
                    <option value={form.workflowId}>Missing workflow ({form.workflowId})</option>
                  )}
                </select>
              )}
              <FieldHint
                error={errorOf("source") ?? workflowFailed ?? undefined}
                help={
                  sourceLoading ? (
                    "Loading the workflow…"
                  ) : workflow ? (
                    <>
                      {workflow.definition.blocks.length} block
                      {workflow.definition.blocks.length === 1 ? "" : "s"},{" "}
                      {workflow.definition.inputs.length} input
                      {workflow.definition.inputs.length === 1 ? "" : "s"} ·{" "}
                      <a
                        href={`/workflows/${encodeURIComponent(workflow.id)}`}
                        target="_blank"
                        rel="noreferrer"
                      >
                        Open
                      </a>
                    </>
                  ) : undefined
                }
              />
            </div>
            <div className="field">
              <label htmlFor={`${ids}-version`}>Version</label>
              <select
                id={`${ids}-version`}
                name="version"
                className={`input${invalid("version")}`}
                value={form.version}
                onChange={(e) =>
                  update(
                    { version: e.target.value === "deployed" ? "deployed" : "live" },
                    "version",
                  )
                }
              >
                <option value="live">Live (current draft)</option>
                <option
                  value="deployed"
                  disabled={deployedVersion === null && form.version !== "deployed"}
                >
                  {deployedVersion === null
                    ? "Deployed (none yet)"
                    : `Deployed (v${deployedVersion})`}
                </option>
              </select>
              <FieldHint
                error={errorOf("version")}
                help={
                  form.version === "live"
                    ? "Each run uses the workflow as it is edited now."
                    : deployedVersion === null
                      ? "This workflow has not been deployed yet: runs will fail until it is."
                      : "Runs use the last deployed version; draft edits don’t affect them."
                }
              />
            </div>
          </div>
        ) : (
          <div className="field">
            <label htmlFor={`${ids}-enrichment`}>Enrichment</label>
            {enrichments.state === "loading" ? (
              <select id={`${ids}-enrichment`} className="input" disabled>
                <option>Loading enrichments…</option>
              </select>
            ) : enrichments.state === "error" ? (
              <div className="field-error">Couldn’t load enrichments: {enrichments.message}</div>
            ) : (
              <select
                id={`${ids}-enrichment`}
                name="enrichmentId"
                className={`input${invalid("source")}`}
                value={form.enrichmentId}
                onChange={(e) => chooseEnrichment(e.target.value)}
              >
                <option value="">Choose an enrichment…</option>
                {enrichments.value.map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.name}
                    {e.cost > 0 ? ` — ${credits(e.cost)} per lookup` : " — free"}
                  </option>
                ))}
                {form.enrichmentId !== "" && !enrichment && (
                  <option value={form.enrichmentId}>Unknown ({form.enrichmentId})</option>
                )}
              </select>
            )}
            <FieldHint
              error={errorOf("source")}
              help={
                enrichment ? (
                  <>
                    {enrichment.description}{" "}
                    {enrichment.cost > 0
                      ? `Costs ${credits(enrichment.cost)} per successful lookup; nothing when skipped or not found.`
                      : "Free."}
                  </>
                ) : undefined
              }
            />
          </div>
        )}

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
                      {input.description && (
                        <span className="editor-help">{input.description}</span>
                      )}
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
                        <option value="">
                          {input.required ? "Choose a column…" : "Not mapped"}
                        </option>
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

        <section className="editor-section" aria-labelledby={`${ids}-outputs`}>
          <h3 id={`${ids}-outputs`}>Outputs</h3>
          <p className="editor-help">
            {form.kind === "workflow" ? (
              <>
                Which result fills which column: a block id (<code>classify</code>) for that block’s
                output, or <code>block.path</code> (<code>fetch.body.name</code>) for a field of it.
                New columns are text columns.
              </>
            ) : (
              "Which enrichment output fills which column. New columns get the output’s type."
            )}
          </p>
          {errorOf("outputs") && <div className="field-error">{errorOf("outputs")}</div>}
          {form.outputs.length === 0 ? (
            <div className="editor-empty">
              No outputs yet: the group would run but write nothing.
            </div>
          ) : (
            <div className="editor-outputs">
              {form.outputs.map((row, i) => {
                const fromKey = groupField.outputFrom(row.key);
                const colKey = groupField.outputColumn(row.key);
                const described = enrichment?.outputs.find((o) => o.id === row.from);
                return (
                  <div key={row.key} className="editor-output">
                    <div>
                      {form.kind === "enrichment" ? (
                        <select
                          className={`input editor-grow${invalid(fromKey)}`}
                          aria-label={`Output ${i + 1}: enrichment output`}
                          name={`outputs.${i}.from`}
                          value={row.from}
                          onChange={(e) => updateRow(row.key, { from: e.target.value }, "from")}
                        >
                          <option value="">Choose an output…</option>
                          {enrichment?.outputs.map((o) => (
                            <option key={o.id} value={o.id}>
                              {o.id} ({o.type})
                            </option>
                          ))}
                          {row.from !== "" && !outputIds?.includes(row.from) && (
                            <option value={row.from}>{row.from} (unknown)</option>
                          )}
                        </select>
                      ) : (
                        <input
                          className={`input editor-grow editor-mono${invalid(fromKey)}`}
                          aria-label={`Output ${i + 1}: block or block.path`}
                          name={`outputs.${i}.from`}
                          list={`${ids}-blocks`}
                          value={row.from}
                          spellCheck={false}
                          autoComplete="off"
                          placeholder="blockId or blockId.path"
                          onChange={(e) => updateRow(row.key, { from: e.target.value }, "from")}
                        />
                      )}
                      <FieldHint error={errorOf(fromKey)} help={described?.description} />
                    </div>
                    <span className="editor-arrow" aria-hidden="true">
                      →
                    </span>
                    <div className="stack editor-tight">
                      <select
                        className={`input editor-grow${invalid(colKey)}`}
                        aria-label={`Output ${i + 1}: column`}
                        name={`outputs.${i}.column`}
                        value={row.column}
                        onChange={(e) => {
                          const column = e.target.value;
                          const newName =
                            column === NEW_COLUMN && row.newName.trim() === ""
                              ? newColumnName(row, row.from)
                              : row.newName;
                          updateRow(row.key, { column, newName }, "column");
                        }}
                      >
                        <option value="">Choose a column…</option>
                        <option value={NEW_COLUMN}>New column…</option>
                        <optgroup label="Existing columns">
                          {table.columns.map((c) => {
                            const owner = owners.get(c.id);
                            return (
                              <option key={c.id} value={c.id} disabled={owner !== undefined}>
                                {columnLabel(c)}
                                {owner !== undefined ? ` — filled by ${owner}` : ""}
                              </option>
                            );
                          })}
                        </optgroup>
                      </select>
                      {row.column === NEW_COLUMN && (
                        <input
                          className={`input editor-grow${invalid(colKey)}`}
                          aria-label={`Output ${i + 1}: new column name`}
                          name={`outputs.${i}.newName`}
                          value={row.newName}
                          maxLength={200}
                          placeholder="New column name"
                          onChange={(e) =>
                            updateRow(row.key, { newName: e.target.value }, "column")
                          }
                        />
                      )}
                      <FieldHint
                        error={errorOf(colKey)}
                        help={
                          row.column === NEW_COLUMN
                            ? `Creates a ${newOutputColumnType(form.kind, row.from, enrichment)} column.`
                            : undefined
                        }
                      />
                    </div>
                    <button
                      type="button"
                      className="btn btn-ghost btn-small"
                      aria-label={`Remove output ${i + 1}`}
                      title="Remove this output"
                      onClick={() => removeOutput(row.key)}
                    >
                      ✕
                    </button>
                  </div>
                );
              })}
            </div>
          )}
          <datalist id={`${ids}-blocks`}>
            {blocks.map((b) => (
              <option key={b.id} value={b.id}>
                {b.type}
              </option>
            ))}
          </datalist>
          <div className="row editor-actions">
            <button type="button" className="btn btn-small" onClick={addOutput}>
              + Add output
            </button>
            {form.kind === "enrichment" && enrichment && (
              <button
                type="button"
                className="btn btn-small"
                onClick={addAllOutputs}
                disabled={enrichment.outputs.every((o) =>
                  form.outputs.some((r) => r.from === o.id),
                )}
              >
                Add all outputs ({enrichment.outputs.length})
              </button>
            )}
          </div>
        </section>

        <section className="editor-section" aria-labelledby={`${ids}-deps`}>
          <div className="row">
            <h3 id={`${ids}-deps`}>Depends on</h3>
            <div className="spacer" />
            {dependsTouched && (
              <button
                type="button"
                className="btn btn-ghost btn-small"
                onClick={() => {
                  setDependsTouched(false);
                  clearErrors("dependsOn");
                }}
              >
                Reset to the input columns
              </button>
            )}
          </div>
          <p className="editor-help">
            A row is ready for this group once these columns are filled (not empty, and not
            unticked). {dependsTouched ? "" : "By default: the columns mapped to its inputs."}
          </p>
          {errorOf("dependsOn") && <div className="field-error">{errorOf("dependsOn")}</div>}
          {table.columns.length === 0 ? (
            <div className="editor-empty">The table has no columns yet.</div>
          ) : (
            <div className="editor-checks">
              {table.columns.map((c) => {
                const own = ownOutputs.has(c.id);
                return (
                  <label
                    key={c.id}
                    className={`editor-check${own ? " editor-check-off" : ""}`}
                    title={own ? "Filled by this group" : undefined}
                  >
                    <input
                      type="checkbox"
                      name={`dependsOn.${c.id}`}
                      checked={!own && dependsOn.includes(c.id)}
                      disabled={own}
                      onChange={() => toggleDependency(c.id)}
                    />
                    {c.name}
                  </label>
                );
              })}
            </div>
          )}
        </section>

        <section className="editor-section">
          <label className="editor-check editor-toggle">
            <input
              type="checkbox"
              name="autoRun"
              checked={form.autoRun}
              onChange={(e) => update({ autoRun: e.target.checked }, "autoRun")}
            />
            <span>
              <strong>Run automatically</strong>
              <span className="editor-help">
                Runs by itself on a row once the columns it depends on are filled, and re-runs when
                they change (its output columns are cleared first). Without it, the group runs only
                when you start a run.
              </span>
            </span>
          </label>
          {errorOf("autoRun") && <div className="field-error">{errorOf("autoRun")}</div>}
          {form.autoRun && dependsOn.length === 0 && (
            <div className="editor-warn">
              Tick at least one column under “Depends on”: with none, the group never runs by
              itself.
            </div>
          )}
          {form.autoRun && !group?.autoRun && dependsOn.length > 0 && table.rowCount > 0 && (
            <div className="editor-help">
              When you save, it also starts on the rows of this table that are already ready.
              {enrichment && enrichment.cost > 0
                ? ` Each successful lookup costs ${credits(enrichment.cost)}.`
                : ""}
            </div>
          )}
        </section>

        {confirmDelete && group && (
          <div className="editor-confirm" role="alert">
            <strong>Delete the group “{group.name}”?</strong>
            <p className="editor-help">
              It stops running on this table.{" "}
              {deletedOutputs
                ? `Its output columns (${deletedOutputs}) stay in the table with their values.`
                : ""}
            </p>
            <div className="row">
              <button
                type="button"
                className="btn btn-small btn-danger"
                onClick={remove}
                disabled={busy !== null}
              >
                {busy === "delete" ? "Deleting…" : "Delete group"}
              </button>
              <button
                type="button"
                className="btn btn-small"
                onClick={() => setConfirmDelete(false)}
                disabled={busy !== null}
              >
                Keep it
              </button>
            </div>
          </div>
        )}

        <div className="editor-footer">
          {editing && !confirmDelete && (
            <button
              type="button"
              className="btn btn-danger"
              onClick={() => setConfirmDelete(true)}
              disabled={busy !== null}
            >
              Delete…
            </button>
          )}
          {attempted && hasChecks && (
            <span className="field-error">Fix the fields marked in red.</span>
          )}
          <div className="spacer" />
          <button type="button" className="btn" onClick={onClose} disabled={busy !== null}>
            Cancel
          </button>
          <button
            type="submit"
            className="btn btn-primary"
            disabled={busy !== null || sourceLoading}
          >
            {busy === "save"
              ? "Saving…"
              : sourceLoading
                ? "Loading…"
                : editing
                  ? "Save group"
                  : "Add group"}
          </button>
        </div>
      </form>
    </EditorModal>
  );
}
