"use client";
/**
 * The group editor's source: whether the group runs a workflow or an enrichment, which
 * one (from the loaded catalogues), and for a workflow the version it runs (the live
 * draft or the last deployed one).
 */
import type { TableView } from "@/contracts/table";
import { FieldHint } from "./editor-frame";
import { credits } from "./group-form";
import type { GroupFormState } from "./use-group-form";
import { WaterfallSteps } from "./WaterfallSteps";

/** The "Runs" choice and the workflow (with version) or enrichment picker. */
export function GroupSource({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const {
    form,
    errorOf,
    invalid,
    chooseKind,
    workflows,
    chooseWorkflow,
    listedWorkflow,
    workflowFailed,
    sourceLoading,
    workflow,
    update,
    deployedVersion,
    enrichments,
    chooseEnrichment,
    enrichment,
  } = state;
  return (
    <>
      <div className="field">
        <span className="editor-label" id={`${ids}-kind`}>
          Runs
        </span>
        <div className="editor-segmented" role="radiogroup" aria-labelledby={`${ids}-kind`}>
          {(["workflow", "enrichment", "waterfall"] as const).map((k) => (
            <label key={k} className={form.kind === k ? "on" : ""}>
              <input
                type="radio"
                name={`${ids}-kind`}
                value={k}
                checked={form.kind === k}
                onChange={() => chooseKind(k)}
              />
              {k === "workflow"
                ? "A workflow"
                : k === "enrichment"
                  ? "An enrichment"
                  : "A waterfall"}
            </label>
          ))}
        </div>
        <FieldHint
          error={errorOf("kind")}
          help={
            form.kind === "workflow"
              ? "One of your workflows, run once per row."
              : form.kind === "enrichment"
                ? "A built-in lookup (e-mail domain, phone number, company data…), run once per row."
                : "Enrichments or workflows tried in order, per row, until one finds a valid answer; later steps are not called and only steps that answered are charged."
          }
        />
      </div>

      {form.kind === "waterfall" ? (
        <WaterfallSteps ids={ids} table={table} state={state} />
      ) : form.kind === "workflow" ? (
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
                update({ version: e.target.value === "deployed" ? "deployed" : "live" }, "version")
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
    </>
  );
}
