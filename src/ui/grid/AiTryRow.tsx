"use client";
/**
 * "Try on this row": runs the AI column's workflow once, as the form has it now, on one
 * row's values through `POST /api/workflows/:id/test`, and shows what each output column
 * would get. Nothing is written to the table. The call is a real, paid model call: the
 * first try in a dialog asks before it is made.
 */
import { useState } from "react";
import type { Column } from "@/contracts/table";
import { answer as answerOf, api, describeError } from "../api";
import { type AiColumnPlan, tryInputs } from "./ai-column-plan";
import { type Preview, previewOf, shownValue, tryRowId } from "./ai-try";
import { creditsText } from "./llm-details";
import type { RowView } from "./model";

/** How many rows the picker offers (the grid's first ones). */
const PICKABLE = 200;

function rowLabel(row: RowView, index: number, columns: readonly Column[]): string {
  const first = columns
    .map((c) => row.data[c.id])
    .find((v) => v !== null && v !== undefined && v !== "");
  const text = first === undefined ? "" : shownValue(first);
  return `Row ${index + 1}${text ? ` — ${text.length > 40 ? `${text.slice(0, 40)}…` : text}` : ""}`;
}

export function AiTryRow(props: {
  rows: readonly RowView[];
  selected: ReadonlySet<string>;
  columns: readonly Column[];
  model: string;
  disabled: boolean;
  /** The plan and its saved draft, or null when the form is not ready (it shows why). */
  prepare: () => Promise<{ plan: AiColumnPlan; workflowId: string } | null>;
}) {
  const { rows, columns } = props;
  const offered = rows.slice(0, PICKABLE);
  const [rowId, setRowId] = useState(() => tryRowId(offered, props.selected));
  const [confirmed, setConfirmed] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Preview | null>(null);
  const row = offered.find((r) => r.id === rowId) ?? offered[0];

  const run = async () => {
    if (!row) return;
    setConfirming(false);
    setBusy(true);
    setResult(null);
    try {
      const ready = await props.prepare();
      if (!ready) return;
      const answer = await answerOf(
        api.POST("/api/workflows/{id}/test", {
          params: { path: { id: ready.workflowId } },
          body: {
            definition: ready.plan.workflow.definition,
            inputs: tryInputs(ready.plan, row.data),
            // An llm block is paid work: the test endpoint refuses it without this.
            allowPaid: true,
          },
        }),
      );
      setResult(previewOf(ready.plan, answer));
    } catch (err) {
      setResult({ ok: false, error: describeError(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="editor-section" data-testid="ai-try-section">
      <h3>Try on a row</h3>
      <p className="editor-help">
        Asks the model once with a row’s values and shows what the columns would get; nothing is
        written to the table. The first try saves the AI column’s workflow as a draft.
      </p>
      {!row ? (
        <div className="editor-empty">Add a row to try the prompt on it.</div>
      ) : (
        <div className="row">
          <select
            className="input"
            aria-label="Row to try"
            data-testid="ai-try-row"
            value={row.id}
            onChange={(e) => {
              setRowId(e.target.value);
              setResult(null);
            }}
          >
            {offered.map((r, i) => (
              <option key={r.id} value={r.id}>
                {rowLabel(r, i, columns)}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="btn"
            data-testid="ai-try"
            disabled={busy || props.disabled}
            onClick={() => (confirmed ? void run() : setConfirming(true))}
          >
            {busy ? "Asking…" : "Try on this row"}
          </button>
        </div>
      )}
      {confirming && (
        <div className="editor-confirm" role="alert" data-testid="ai-try-confirm">
          <strong>Call {props.model || "the model"} once?</strong>
          <p className="editor-help">
            It is a real call: it is charged at the model’s price, if it has one, like a cell’s.
          </p>
          <div className="row">
            <button
              type="button"
              className="btn btn-small btn-primary"
              data-testid="ai-try-confirm-yes"
              onClick={() => {
                setConfirmed(true);
                void run();
              }}
            >
              Call the model
            </button>
            <button type="button" className="btn btn-small" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {result?.ok === false && (
        <div className="notice notice-error" role="alert" data-testid="ai-try-error">
          {result.error}
        </div>
      )}
      {result?.ok && (
        <p className="editor-help" data-testid="ai-try-cost">
          This try cost {creditsText(result.costCredits)}.
        </p>
      )}
      {result?.ok && (
        <table className="table-list" data-testid="ai-try-preview">
          <tbody>
            {result.values.map((v) => (
              <tr key={v.columnId} data-testid={`ai-try-value-${v.columnId}`}>
                <th>{v.name}</th>
                <td style={{ whiteSpace: "pre-wrap" }}>{shownValue(v.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
