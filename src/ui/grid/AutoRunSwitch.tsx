"use client";
/**
 * The table's auto-run switch in the toolbar. Off asks nothing (it cancels nothing); on
 * asks what to do with the rows that came while it was off: run the auto-run groups
 * where they never ran (`backfill: "run"`, one run) or leave them (`"skip"`).
 */
import { useState } from "react";
import type { PatchedTable, PatchTableRequest, TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import { Modal } from "./Dialogs";

interface Props {
  table: TableView;
  /** The table as the switch left it, and the backfill's run when one started. */
  onChanged(table: PatchedTable): void;
  onError(message: string): void;
}

export function AutoRunSwitch({ table, onChanged, onError }: Props) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);

  const send = async (body: PatchTableRequest) => {
    setBusy(true);
    try {
      onChanged(
        await answer(api.PATCH("/api/tables/{id}", { params: { path: { id: table.id } }, body })),
      );
      setAsking(false);
    } catch (err) {
      onError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <label className="row" style={{ gap: 6 }} title="Whether groups run by themselves">
        <input
          type="checkbox"
          role="switch"
          data-testid="auto-run-switch"
          checked={table.autoRun}
          aria-checked={table.autoRun}
          disabled={busy}
          onChange={(e) => {
            if (e.currentTarget.checked) setAsking(true);
            else void send({ autoRun: false });
          }}
        />
        Auto-run {table.autoRun ? "on" : "off"}
      </label>
      {asking && (
        <Modal title="Turn auto-run back on" onClose={() => setAsking(false)}>
          <p className="muted">Rows added or edited while auto-run was off have not run.</p>
          <div className="row" style={{ gap: 8 }}>
            <button
              type="button"
              className="btn btn-primary"
              data-testid="auto-run-backfill-run"
              disabled={busy}
              onClick={() => void send({ autoRun: true, backfill: "run" })}
            >
              Run the auto-run groups on rows that never ran
            </button>
            <button
              type="button"
              className="btn"
              data-testid="auto-run-backfill-skip"
              disabled={busy}
              onClick={() => void send({ autoRun: true, backfill: "skip" })}
            >
              Leave existing rows as they are
            </button>
          </div>
        </Modal>
      )}
    </>
  );
}
