"use client";
/** The grid's small dialogs (approve a paused cell, run the first N rows) and their frame. */
import { type ReactNode, useState } from "react";
import type { Group } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import type { RowView } from "./model";

export function Modal({
  title,
  onClose,
  children,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click outside is a shortcut; the Close button and Escape do the same
    <div
      className="modal-backdrop"
      role="presentation"
      onKeyDown={(e) => {
        if (e.key === "Escape") onClose();
      }}
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div className="modal" role="dialog" aria-label={title} aria-modal="true">
        <div className="row" style={{ marginBottom: 12 }}>
          <h2 style={{ margin: 0 }}>{title}</h2>
          <div className="spacer" />
          <button type="button" className="btn btn-ghost btn-small" onClick={onClose}>
            Close
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}

export function ApproveDialog({
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
  const [text, setText] = useState('{\n  "approved": true\n}');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  let parsed: unknown;
  let jsonError: string | null = null;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    jsonError = err instanceof Error ? err.message : "not JSON";
  }
  const submit = async () => {
    if (!cell || jsonError) return;
    setBusy(true);
    setError(null);
    try {
      await answer(
        api.POST("/api/tables/{id}/rows/{rowId}/cells/{groupId}/resume", {
          params: { path: { id: tableId, rowId: row.id, groupId: group.id } },
          body: { executionId: cell.executionId, data: parsed },
        }),
      );
      onClose();
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  const stop = async () => {
    setBusy(true);
    try {
      await answer(
        api.POST("/api/tables/{id}/runs/cancel", {
          params: { path: { id: tableId } },
          body: { rowIds: [row.id], groupIds: [group.id] },
        }),
      );
      onClose();
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Modal title={`Approve “${group.name}”`} onClose={onClose}>
      <p className="muted" style={{ marginTop: 0 }}>
        This cell is waiting for approval. The data you send becomes the approval block's output,
        and the workflow carries on from there.
      </p>
      <div className="field">
        <label htmlFor="approve-data">Data (JSON)</label>
        <textarea
          id="approve-data"
          className={`input code${jsonError ? " invalid" : ""}`}
          rows={6}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        {jsonError && <span className="field-error">{jsonError}</span>}
      </div>
      {error && <div className="notice notice-error">{error}</div>}
      <div className="row">
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy || jsonError !== null}
          onClick={() => void submit()}
        >
          Approve
        </button>
        <button
          type="button"
          className="btn btn-danger"
          disabled={busy}
          onClick={() => void stop()}
        >
          Stop instead
        </button>
      </div>
    </Modal>
  );
}

export function FirstNDialog({
  group,
  onRun,
  onClose,
}: {
  group: Group | null;
  onRun: (n: number) => void;
  onClose: () => void;
}) {
  const [n, setN] = useState("10");
  const value = Number(n);
  const valid = Number.isInteger(value) && value > 0;
  return (
    <Modal title={`Run the first N rows${group ? ` of “${group.name}”` : ""}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (valid) onRun(value);
        }}
      >
        <div className="field">
          <label htmlFor="first-n">Rows</label>
          <input
            id="first-n"
            className={`input${valid ? "" : " invalid"}`}
            inputMode="numeric"
            value={n}
            onChange={(e) => setN(e.target.value)}
          />
          {!valid && <span className="field-error">Enter a whole number above 0</span>}
        </div>
        <button className="btn btn-primary" type="submit" disabled={!valid}>
          Run
        </button>
      </form>
    </Modal>
  );
}

/** The API's bound on `staleAfterHours`. */
const MAX_STALE_HOURS = 1_000_000;

/** Hours as typed, when they make a stale run's `staleAfterHours` (else null). */
export function staleHours(text: string): number | null {
  const value = Number(text);
  return text.trim() !== "" && Number.isFinite(value) && value > 0 && value <= MAX_STALE_HOURS
    ? value
    : null;
}

/** The "stale after" hours field of a stale run, with its message when it cannot be sent. */
export function StaleHoursField({
  id,
  hours,
  onChange,
}: {
  id: string;
  hours: string;
  onChange: (hours: string) => void;
}) {
  const valid = staleHours(hours) !== null;
  return (
    <div className="field">
      <label htmlFor={id}>Completed more than this many hours ago</label>
      <input
        id={id}
        data-testid={id}
        className={`input${valid ? "" : " invalid"}`}
        inputMode="decimal"
        value={hours}
        onChange={(e) => onChange(e.target.value)}
      />
      {!valid && (
        <span className="field-error">
          Enter a number of hours above 0 (at most {MAX_STALE_HOURS.toLocaleString()})
        </span>
      )}
      <span className="muted">
        Cells never run are stale too; errored and stopped ones are not.
      </span>
    </div>
  );
}

/**
 * Run ▾ › Run stale rows…: the cells whose last completed attempt ended longer ago than
 * the hours given, and the cells never run (errored and stopped cells are not stale).
 */
export function StaleDialog({
  group,
  onRun,
  onClose,
}: {
  group: Group | null;
  onRun: (staleAfterHours: number) => void;
  onClose: () => void;
}) {
  const [hours, setHours] = useState("24");
  const value = staleHours(hours);
  return (
    <Modal title={`Run stale rows${group ? ` of “${group.name}”` : ""}`} onClose={onClose}>
      <form
        data-testid="run-stale"
        onSubmit={(e) => {
          e.preventDefault();
          if (value !== null) onRun(value);
        }}
      >
        <StaleHoursField id="run-stale-hours" hours={hours} onChange={setHours} />
        <button
          className="btn btn-primary"
          type="submit"
          disabled={value === null}
          data-testid="run-stale-start"
        >
          Run
        </button>
      </form>
    </Modal>
  );
}
