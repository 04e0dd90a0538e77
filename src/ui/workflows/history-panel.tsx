"use client";
/**
 * The workflow's deployed versions (API.md "Workflows: history"), newest first, the one
 * deployed marked. Selecting a version loads it (versions never change, so each is read
 * once) and shows its definition against the draft; "Deploy this version" deploys a copy
 * of it as the next version (a rollback: groups on "deployed" run it from their next
 * cell; the draft is not changed). The list is read again whenever the deployed version
 * moves, by this panel or by the editor's own Deploy.
 */
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError } from "../api";
import { useListFetch } from "../use-list-fetch";
import { timeAgo } from "./format";
import { HistoryDiff } from "./history-diff";

export interface HistoryPanelProps {
  workflowId: string;
  draft: unknown | null;
  deployedVersion: number | null;
  onDeployed: (version: number) => void;
}

type VersionSummary = Schemas["WorkflowVersionSummary"];
type VersionView = Schemas["WorkflowVersionView"];

type Detail =
  | { state: "loading"; version: number }
  | { state: "ready"; view: VersionView }
  | { state: "failed"; version: number; error: string };

export function HistoryPanel(props: HistoryPanelProps): ReactNode {
  const { workflowId, draft, deployedVersion, onDeployed } = props;
  const read = useCallback(
    async (): Promise<VersionSummary[]> =>
      (
        await answer(
          api.GET("/api/workflows/{id}/versions", { params: { path: { id: workflowId } } }),
        )
      ).versions,
    [workflowId],
  );
  const versions = useListFetch(read);
  const { reload } = versions;

  // The editor's Deploy (or ours) moved the deployed version: a new one is in the list.
  const seenDeployed = useRef(deployedVersion);
  useEffect(() => {
    if (seenDeployed.current === deployedVersion) return;
    seenDeployed.current = deployedVersion;
    void reload();
  }, [deployedVersion, reload]);

  const [detail, setDetail] = useState<Detail | null>(null);
  const loaded = useRef(new Map<string, VersionView>());
  const selecting = useRef(0);
  const select = async (version: number) => {
    const n = ++selecting.current;
    const cacheKey = `${workflowId}@${version}`;
    const known = loaded.current.get(cacheKey);
    if (known) {
      setDetail({ state: "ready", view: known });
      return;
    }
    setDetail({ state: "loading", version });
    try {
      const view = await answer(
        api.GET("/api/workflows/{id}/versions/{version}", {
          params: { path: { id: workflowId, version: String(version) } },
        }),
      );
      loaded.current.set(cacheKey, view);
      if (n === selecting.current) setDetail({ state: "ready", view });
    } catch (err) {
      if (n === selecting.current)
        setDetail({ state: "failed", version, error: describeError(err) });
    }
  };

  const [deploying, setDeploying] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [deployError, setDeployError] = useState<string | null>(null);
  const deployCopy = async (version: number) => {
    const ok = window.confirm(
      `Deploy a copy of version ${version} as the next version? Groups set to “deployed” run it from their next cell. The draft is not changed.`,
    );
    if (!ok) return;
    setDeploying(true);
    setNotice(null);
    setDeployError(null);
    try {
      const r = await answer(
        api.POST("/api/workflows/{id}/deploy", {
          params: { path: { id: workflowId } },
          body: { version },
        }),
      );
      setNotice(`Deployed version ${r.version}, a copy of version ${version}.`);
      onDeployed(r.version);
      await reload();
    } catch (err) {
      setDeployError(describeError(err));
    } finally {
      setDeploying(false);
    }
  };

  const list = versions.list;
  // Every deploy takes the next number, so the newest version is the one deployed.
  const current = list?.[0]?.version ?? deployedVersion;
  const selected =
    detail === null ? null : detail.state === "ready" ? detail.view.version : detail.version;

  return (
    <section className="card history-panel" data-testid="history-panel">
      <div className="wf-side-head">
        <h2>History</h2>
        {list && list.length > 0 && (
          <span className="muted">
            {list.length === 1 ? "1 version" : `${list.length} versions`}
          </span>
        )}
      </div>
      {versions.error && (
        <div className="notice notice-error" role="alert" data-testid="history-error">
          {versions.error}{" "}
          <button type="button" className="btn btn-small" onClick={() => void reload()}>
            Try again
          </button>
        </div>
      )}
      {list === null && !versions.error && <p className="muted">Loading versions…</p>}
      {list?.length === 0 && (
        <p className="muted" data-testid="history-empty">
          Not deployed yet. Each deploy is kept here.
        </p>
      )}
      {list && list.length > 0 && (
        <ul className="history-list">
          {list.map((v) => (
            <li key={v.version}>
              <button
                type="button"
                className={`history-version${v.version === selected ? " selected" : ""}`}
                data-testid={`history-version-${v.version}`}
                aria-pressed={v.version === selected}
                onClick={() => void select(v.version)}
              >
                <span className="history-number">v{v.version}</span>
                <span className="muted" title={new Date(v.deployedAt).toLocaleString()}>
                  {timeAgo(v.deployedAt)}
                </span>
                {v.rolledBackFrom !== null && (
                  <span className="history-rollback">rolled back from v{v.rolledBackFrom}</span>
                )}
                {v.version === current && (
                  <span className="history-current" data-testid="history-current">
                    deployed
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
      )}
      {notice && (
        <div className="notice notice-ok" role="status" data-testid="history-notice">
          {notice}
        </div>
      )}
      {deployError && (
        <div className="notice notice-error" role="alert" data-testid="history-deploy-error">
          {deployError}
        </div>
      )}
      {detail?.state === "loading" && <p className="muted">Loading version {detail.version}…</p>}
      {detail?.state === "failed" && (
        <div className="notice notice-error" role="alert">
          Version {detail.version} could not be read: {detail.error}{" "}
          <button
            type="button"
            className="btn btn-small"
            onClick={() => void select(detail.version)}
          >
            Try again
          </button>
        </div>
      )}
      {detail?.state === "ready" && (
        <div className="history-detail">
          <div className="history-detail-head">
            <h3>Version {detail.view.version} against the draft</h3>
            <button
              type="button"
              className="btn btn-small"
              data-testid="history-deploy"
              disabled={deploying || detail.view.version === current}
              title={
                detail.view.version === current
                  ? "This is the deployed version"
                  : "Deploy a copy of this version as the next version"
              }
              onClick={() => void deployCopy(detail.view.version)}
            >
              {deploying ? "Deploying…" : "Deploy this version"}
            </button>
          </div>
          <HistoryDiff
            version={detail.view.version}
            definition={detail.view.definition}
            draft={draft}
          />
        </div>
      )}
    </section>
  );
}
