"use client";
/** Workflows: every workflow of the workspace, its deployed version, and a new one. */
import { useState } from "react";
import { answer, api, describeError, type WorkflowAnswer } from "@/ui/api";
import { Shell } from "@/ui/shell";
import { useListFetch } from "@/ui/use-list-fetch";
import { starterDefinition } from "@/ui/workflows/block-help";
import { plural, timeAgo } from "@/ui/workflows/format";

/** Most recently edited first: that is usually the one people come back for. */
const readWorkflows = async (): Promise<WorkflowAnswer[]> =>
  (await answer(api.GET("/api/workflows"))).workflows.sort((a, b) =>
    b.updatedAt.localeCompare(a.updatedAt),
  );

export default function WorkflowsPage() {
  const { list: workflows, error, setError, reload: load } = useListFetch(readWorkflows);
  const [creating, setCreating] = useState(false);

  const create = async () => {
    setCreating(true);
    setError(null);
    try {
      const w = await answer(
        api.POST("/api/workflows", {
          body: { name: "Untitled workflow", definition: starterDefinition() },
        }),
      );
      window.location.assign(`/workflows/${encodeURIComponent(w.id)}`);
    } catch (err) {
      setError(`Could not create a workflow: ${describeError(err)}`);
      setCreating(false);
    }
  };

  const newButton = (
    <button
      className="btn btn-primary"
      type="button"
      disabled={creating}
      onClick={() => void create()}
    >
      {creating ? "Creating…" : "New workflow"}
    </button>
  );

  return (
    <Shell>
      <div className="page-head">
        <div>
          <h1>Workflows</h1>
          <p className="muted wf-subtitle">
            The work a table's group runs for each row: blocks of expressions, HTTP calls,
            enrichments, LLM prompts and approvals.
          </p>
        </div>
        <div className="spacer" />
        {newButton}
      </div>
      {error && (
        <div className="notice notice-error" role="alert">
          {error}{" "}
          {workflows === null && (
            <button className="btn btn-small" type="button" onClick={() => void load()}>
              Try again
            </button>
          )}
        </div>
      )}
      <div className="card" style={{ padding: 0 }}>
        {workflows === null ? (
          <p className="muted" style={{ padding: 16 }}>
            {error ? "The workflows could not be loaded." : "Loading workflows…"}
          </p>
        ) : workflows.length === 0 ? (
          <div className="wf-empty">
            <h2>No workflows yet</h2>
            <p className="muted">
              A workflow turns a row's columns into new values. Start with a one-block workflow and
              grow it in the editor; then add it to a table as a group.
            </p>
            {newButton}
          </div>
        ) : (
          <table className="table-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Blocks</th>
                <th>Inputs</th>
                <th>Deployed</th>
                <th>Last edited</th>
              </tr>
            </thead>
            <tbody>
              {workflows.map((w) => (
                <tr key={w.id}>
                  <td>
                    <a href={`/workflows/${encodeURIComponent(w.id)}`} className="wf-list-name">
                      {w.name}
                    </a>
                    <div className="muted wf-list-id">
                      <code>{w.id}</code>
                    </div>
                  </td>
                  <td className="muted">{plural(w.definition.blocks.length, "block")}</td>
                  <td className="muted">
                    {w.definition.inputs.length === 0 ? (
                      <span className="empty">none</span>
                    ) : (
                      w.definition.inputs.map((i) => i.name).join(", ")
                    )}
                  </td>
                  <td>
                    {w.deployedVersion === null ? (
                      <span className="wf-version none">not deployed</span>
                    ) : (
                      <span className="wf-version">version {w.deployedVersion}</span>
                    )}
                  </td>
                  <td className="muted" title={new Date(w.updatedAt).toLocaleString()}>
                    {timeAgo(w.updatedAt)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Shell>
  );
}
