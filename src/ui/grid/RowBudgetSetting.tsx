"use client";
/**
 * The table's default budget per row, beside the auto-run switch: the runs created from
 * now on without a budget of their own (explicit or auto-fired) take it. A button says
 * the budget; it opens a small form that sets it (`PATCH { maxCreditsPerRow: n }`) or
 * clears it (`null`). Runs under way keep the budget they started with.
 */
import { useState } from "react";
import type { TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import { readCreditInput } from "./credit-input";
import { Modal } from "./Dialogs";

interface Props {
  table: TableView;
  onChanged(table: TableView): void;
  onError(message: string): void;
}

export function RowBudgetSetting({ table, onChanged, onError }: Props) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const read = readCreditInput(text);

  const send = async (maxCreditsPerRow: number | null) => {
    setBusy(true);
    try {
      onChanged(
        await answer(
          api.PATCH("/api/tables/{id}", {
            params: { path: { id: table.id } },
            body: { maxCreditsPerRow },
          }),
        ),
      );
      setEditing(false);
    } catch (err) {
      onError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const current = table.maxCreditsPerRow;
  return (
    <>
      <button
        type="button"
        className="btn"
        data-testid="row-budget"
        title="The default budget per row of the runs started from now on"
        onClick={() => {
          setText(current === null ? "" : String(current));
          setEditing(true);
        }}
      >
        {current === null ? "No row budget" : `Row budget: ${current} credits`}
      </button>
      {editing && (
        <Modal title="Budget per row" onClose={() => setEditing(false)}>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (read.ok) void send(read.value);
            }}
          >
            <div className="field">
              <label htmlFor="table-max-credits-per-row">Max credits per row</label>
              <input
                id="table-max-credits-per-row"
                data-testid="table-max-credits-per-row"
                className={`input${read.ok ? "" : " invalid"}`}
                inputMode="decimal"
                placeholder="No budget"
                value={text}
                onChange={(e) => setText(e.target.value)}
              />
              {read.ok ? (
                <span className="muted">
                  Runs started from now on without a budget of their own, and cells that run by
                  themselves, make no paid call that would take a row past this; that cell ends
                  "Over budget". Empty: no budget.
                </span>
              ) : (
                <span className="field-error">
                  Enter a number above 0 (up to three decimals), or leave it empty
                </span>
              )}
            </div>
            <div className="row">
              <button className="btn btn-primary" type="submit" disabled={!read.ok || busy}>
                Save
              </button>
              <button className="btn" type="button" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </div>
          </form>
        </Modal>
      )}
    </>
  );
}
