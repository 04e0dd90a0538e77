"use client";
/**
 * The top of the workflow editor page: the breadcrumb and, once the workflow has loaded,
 * its title, deployed version, save state and the Save and Deploy buttons; before that,
 * the loading, missing or failed state in its place.
 */
import { timeAgo } from "./format";
import type { WorkflowDraft } from "./use-workflow-draft";
import type { Load } from "./use-workflow-load";

/** What shows instead of the editor until the workflow has loaded. */
export function WorkflowLoadState({ load, onRetry }: { load: Load; onRetry: () => void }) {
  return (
    <>
      <div className="page-head">
        <a href="/workflows" className="wf-crumb">
          Workflows
        </a>
        <span className="muted">/</span>
      </div>
      {load.state === "loading" && (
        <div className="card">
          <p className="muted">Loading the workflow…</p>
        </div>
      )}
      {load.state === "missing" && (
        <div className="card wf-empty">
          <h2>This workflow does not exist</h2>
          <p className="muted">It may have been removed, or it belongs to another workspace.</p>
          <a className="btn" href="/workflows">
            Back to workflows
          </a>
        </div>
      )}
      {load.state === "failed" && (
        <div className="notice notice-error">
          Could not load the workflow: {load.message}{" "}
          <button type="button" className="btn btn-small" onClick={onRetry}>
            Try again
          </button>
        </div>
      )}
    </>
  );
}

/** The title bar: name, deployed version, save state, Save and Deploy. */
export function WorkflowHead({ draft }: { draft: WorkflowDraft }) {
  const { parsed, trimmedName, deployedVersion, dirty, busy, savedAt, canSave, save, deploy } =
    draft;
  const saveTitle = !parsed.ok
    ? "Fix the JSON syntax error first"
    : trimmedName === ""
      ? "Give the workflow a name first"
      : undefined;
  return (
    <div className="page-head wf-head">
      <a href="/workflows" className="wf-crumb">
        Workflows
      </a>
      <span className="muted">/</span>
      <h1>{trimmedName || "Untitled workflow"}</h1>
      {deployedVersion === null ? (
        <span className="wf-version none" title="Tables can only run the live draft">
          Not deployed
        </span>
      ) : (
        <span className="wf-version" title="The version tables pinned to “deployed” run">
          Deployed · v{deployedVersion}
        </span>
      )}
      <div className="spacer" />
      <span className={`wf-save-state${dirty ? " dirty" : ""}`} aria-live="polite">
        {busy === "saving"
          ? "Saving…"
          : dirty
            ? "Unsaved changes"
            : savedAt
              ? `Saved ${timeAgo(savedAt)}`
              : "Saved"}
      </span>
      <button
        type="button"
        className="btn"
        disabled={!canSave || !dirty}
        title={saveTitle ?? "Save the draft (Ctrl/⌘+S)"}
        onClick={() => void save()}
      >
        {busy === "saving" ? "Saving…" : "Save"}
      </button>
      <button
        type="button"
        className="btn btn-primary"
        disabled={busy !== null || (dirty && !canSave)}
        title={
          (dirty ? saveTitle : undefined) ??
          "Freeze the saved draft as the next version; tables on “deployed” run it"
        }
        onClick={() => void deploy()}
      >
        {busy === "deploying" ? "Deploying…" : dirty ? "Save & deploy" : "Deploy"}
      </button>
    </div>
  );
}
