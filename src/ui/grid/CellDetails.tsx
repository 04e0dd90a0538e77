"use client";
/**
 * A cell's detail panel: its current error and block errors (each failing block of a
 * workflow group links to the workflow editor, which highlights it), and its attempt history
 * (newest first, from `GET …/cells/:groupId/attempts`): status, when, duration, error,
 * and the execution a resumed attempt started from; and what the newest attempt's model
 * calls did (per llm block: model, tokens, cost, whether the answer came from the cache).
 * The history is read again whenever the cell's attempt or status changes, so a panel
 * left open follows the cell live.
 */
import { useEffect, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import type { Group } from "@/contracts/table";
import { formatDuration } from "@/domain/durations";
import { answer, api, describeError } from "../api";
import { AttemptChildren } from "./AttemptChildren";
import { describeCell } from "./CellStatus";
import { Modal } from "./Dialogs";
import { creditsText, formatTokens, latestLlmCalls } from "./llm-details";
import type { RowView } from "./model";
import { stepsSummary } from "./waterfall-form";

type Loaded =
  | { state: "loading" }
  | { state: "done"; attempts: Schemas["CellAttempt"][] }
  | { state: "failed"; message: string };

function useAttempts(tableId: string, rowId: string, groupId: string, version: string): Loaded {
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  useEffect(() => {
    // `version` (the cell's execution and status) is here only to read again when it moves.
    void version;
    let live = true;
    answer(
      api.GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
        params: { path: { id: tableId, rowId, groupId } },
      }),
    ).then(
      (r) => live && setLoaded({ state: "done", attempts: r.attempts }),
      (err: unknown) => live && setLoaded({ state: "failed", message: describeError(err) }),
    );
    return () => {
      live = false;
    };
  }, [tableId, rowId, groupId, version]);
  return loaded;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "—");
const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 14)}…` : id);

function AttemptRows({ attempts }: { attempts: Schemas["CellAttempt"][] }) {
  if (attempts.length === 0) return <p className="muted">This cell has not run yet.</p>;
  return (
    <table className="table-list" data-testid="attempts">
      <thead>
        <tr>
          <th>Attempt</th>
          <th>Status</th>
          <th>Started</th>
          <th>Duration</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((a) => (
          <tr
            key={`${a.executionId}:${a.attempt}:${a.endedAt ?? ""}`}
            data-testid="attempt-row"
            data-status={a.status}
            data-resumed-from={a.resumedFrom ?? ""}
          >
            <td title={a.executionId}>
              <code>{shortId(a.executionId)}</code> #{a.attempt}
              {a.resumedFrom && (
                <div className="muted" title={a.resumedFrom}>
                  resumed from <code>{shortId(a.resumedFrom)}</code>
                </div>
              )}
            </td>
            <td>
              {describeCell(a).label}
              {stepsSummary(a.details) && (
                <div className="muted" data-testid="attempt-steps">
                  Steps: {stepsSummary(a.details)}
                </div>
              )}
              <AttemptChildren attempt={a} />
            </td>
            <td>{when(a.startedAt)}</td>
            <td>{a.durationMs === null ? "—" : formatDuration(a.durationMs)}</td>
            <td style={{ whiteSpace: "pre-wrap" }}>{a.error ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function LlmCalls({ attempts }: { attempts: Schemas["CellAttempt"][] }) {
  const latest = latestLlmCalls(attempts);
  if (!latest) return null;
  return (
    <>
      <h2>Model calls</h2>
      <p className="muted">
        Attempt #{latest.attempt.attempt} of <code>{shortId(latest.attempt.executionId)}</code>
      </p>
      <table className="table-list" data-testid="llm-calls">
        <thead>
          <tr>
            <th>Block</th>
            <th>Model</th>
            <th>Tokens in</th>
            <th>Tokens out</th>
            <th>Cost</th>
            <th>Cached</th>
          </tr>
        </thead>
        <tbody>
          {latest.calls.map((c) => (
            <tr key={c.blockId} data-testid={`llm-call-${c.blockId}`}>
              <td>
                <code>{c.blockId}</code>
              </td>
              <td data-testid="llm-model">{c.model}</td>
              <td data-testid="llm-input-tokens">{formatTokens(c.inputTokens)}</td>
              <td data-testid="llm-output-tokens">{formatTokens(c.outputTokens)}</td>
              <td data-testid="llm-cost">
                {c.costCredits === null ? "—" : creditsText(c.costCredits)}
              </td>
              <td data-testid="llm-cached">{c.cached ? "Yes (no charge)" : "No"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function CellDetailsDialog({
  tableId,
  row,
  group,
  onClose,
}: {
  tableId: string;
  row: RowView;
  group: Group;
  onClose: () => void;
}) {
  const cell = row.cells[group.id];
  const loaded = useAttempts(
    tableId,
    row.id,
    group.id,
    `${cell?.executionId ?? ""}:${cell?.status ?? ""}`,
  );
  const blockErrors = Object.entries(cell?.blockErrors ?? {});
  const failed = cell?.status === "error";
  const workflowId = group.kind === "workflow" ? group.workflowId : null;
  return (
    <Modal title={failed ? `“${group.name}” failed` : `“${group.name}”`} onClose={onClose}>
      {failed && (
        <div className="notice notice-error" style={{ whiteSpace: "pre-wrap" }}>
          {cell?.error ?? "The cell failed."}
        </div>
      )}
      {failed && blockErrors.length > 0 && (
        <>
          <h2>By block</h2>
          <table className="table-list">
            <tbody>
              {blockErrors.map(([block, message]) => (
                <tr key={block}>
                  <td>
                    <code>{block}</code>
                  </td>
                  <td style={{ whiteSpace: "pre-wrap" }}>{message}</td>
                  {workflowId !== null && (
                    <td>
                      <a
                        href={`/workflows/${encodeURIComponent(workflowId)}?block=${encodeURIComponent(block)}`}
                        data-testid={`block-error-link-${block}`}
                      >
                        Show in workflow
                      </a>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {loaded.state === "done" && workflowId !== null && <LlmCalls attempts={loaded.attempts} />}
      <h2>Attempts</h2>
      {loaded.state === "loading" && <p className="muted">Loading…</p>}
      {loaded.state === "failed" && <div className="notice notice-error">{loaded.message}</div>}
      {loaded.state === "done" && <AttemptRows attempts={loaded.attempts} />}
      {failed && (
        <p className="muted">
          Run the row again from its ▶ button, or the group's Run menu: “Run failed only” starts
          over, “Resume failed” skips the blocks with effects that already finished.
        </p>
      )}
    </Modal>
  );
}
