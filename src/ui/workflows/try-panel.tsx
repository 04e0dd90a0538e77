"use client";
/**
 * "Try it" in the workflow editor: one run of the workflow, now, through
 * `POST /api/workflows/:id/test`, which writes no cell. It runs the unsaved draft when
 * there are changes (and it parses), else the saved draft; on inputs typed in a form, or
 * on a row of a table through one of its groups. Paid blocks (enrichments, llm calls) are
 * named in a confirmation before anything is sent with `allowPaid`, and a refusal asking
 * for it (a paid block in a sub-workflow) brings the same confirmation. What each block
 * did goes to the graph through `onResults`.
 */
import { type ReactNode, useCallback, useState } from "react";
import { answer, api, describeError } from "../api";
import {
  asksAllowPaid,
  blockRunsOf,
  buildTestBody,
  inputsFrom,
  paidBlocks,
  type TestAnswer,
  type TryTarget,
} from "./try-request";
import { TryResult } from "./try-result";
import { type RowChoice, TryRowPicker } from "./try-row-picker";

export interface BlockRun {
  status: "completed" | "error" | "paused" | "cancelled";
  output: unknown;
  error: string | null;
  durationMs: number;
}

export interface TryPanelProps {
  workflowId: string;
  definition: unknown | null;
  dirty: boolean;
  inputNames: string[];
  onResults: (results: Record<string, BlockRun> | null) => void;
}

/** A confirmation waiting: the paid blocks to name (or the server's words about them). */
interface PaidConfirm {
  paid: string[];
  message: string | null;
}

const NO_ROW: RowChoice = { tableId: "", groupId: "", rowId: "" };

export function TryPanel(props: TryPanelProps): ReactNode {
  const { workflowId, definition, dirty, inputNames, onResults } = props;
  const [mode, setMode] = useState<"inputs" | "row">("inputs");
  const [values, setValues] = useState<Record<string, string>>({});
  const [choice, setChoice] = useState<RowChoice>(NO_ROW);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<PaidConfirm | null>(null);

  const target: TryTarget | null =
    mode === "inputs"
      ? { mode: "inputs", inputs: inputsFrom(inputNames, values) }
      : choice.tableId && choice.groupId && choice.rowId
        ? { mode: "row", ...choice }
        : null;
  const unsavedBroken = dirty && definition === null;

  const send = async (allowPaid: boolean) => {
    if (!target) return;
    setBusy(true);
    setError(null);
    setConfirm(null);
    try {
      const body = buildTestBody({ target, dirty, definition, allowPaid });
      const answered = await answer(
        api.POST("/api/workflows/{id}/test", { params: { path: { id: workflowId } }, body }),
      );
      setResult(answered);
      onResults(blockRunsOf(answered));
    } catch (err) {
      if (!allowPaid && asksAllowPaid(err))
        setConfirm({ paid: [], message: err instanceof Error ? err.message : null });
      else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const run = () => {
    const paid = paidBlocks(definition);
    if (paid.length > 0) setConfirm({ paid, message: null });
    else void send(false);
  };

  const clear = () => {
    setResult(null);
    setError(null);
    onResults(null);
  };

  const useInputs = useCallback(() => setMode("inputs"), []);

  return (
    <section className="card try-panel" data-testid="try-panel">
      <div className="wf-side-head">
        <h2>Try it</h2>
        <span className="muted">
          {dirty ? "runs your unsaved changes" : "runs the saved draft"} · writes no cell
        </span>
      </div>

      <div className="field">
        <div className="editor-segmented" role="radiogroup" aria-label="Try it on">
          <label className={mode === "inputs" ? "on" : ""}>
            <input
              type="radio"
              name="try-mode"
              data-testid="try-mode-inputs"
              checked={mode === "inputs"}
              onChange={() => setMode("inputs")}
            />
            On inputs
          </label>
          <label className={mode === "row" ? "on" : ""}>
            <input
              type="radio"
              name="try-mode"
              data-testid="try-mode-row"
              checked={mode === "row"}
              onChange={() => setMode("row")}
            />
            On a table row
          </label>
        </div>
      </div>

      {mode === "inputs" ? (
        inputNames.length === 0 ? (
          <p className="muted">The workflow declares no inputs.</p>
        ) : (
          inputNames.map((name) => (
            <div className="field" key={name}>
              <label htmlFor={`try-input-${name}`}>
                <code>{name}</code> <span className="muted">(JSON, or text)</span>
              </label>
              <input
                id={`try-input-${name}`}
                className="input"
                data-testid={`try-input-${name}`}
                value={values[name] ?? ""}
                onChange={(e) => setValues((v) => ({ ...v, [name]: e.target.value }))}
              />
            </div>
          ))
        )
      ) : (
        <TryRowPicker
          workflowId={workflowId}
          choice={choice}
          onChange={setChoice}
          onUseInputs={useInputs}
        />
      )}

      {unsavedBroken && (
        <div className="notice notice-warn">
          The unsaved JSON does not parse: fix it, or the saved draft runs instead.
        </div>
      )}

      {confirm && (
        <div className="editor-confirm" role="alert" data-testid="try-paid">
          <strong>This try calls paid blocks, and is charged.</strong>
          {confirm.paid.length > 0 && (
            <ul className="editor-issues">
              {confirm.paid.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          )}
          {confirm.message && <p className="editor-help">{confirm.message}</p>}
          <div className="row">
            <button
              type="button"
              className="btn btn-primary"
              data-testid="try-confirm-paid"
              disabled={busy}
              onClick={() => void send(true)}
            >
              Run and be charged
            </button>
            <button type="button" className="btn" onClick={() => setConfirm(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}

      <div className="row">
        <button
          type="button"
          className="btn btn-primary"
          data-testid="try-run"
          disabled={busy || target === null || confirm !== null}
          onClick={run}
        >
          {busy ? "Running…" : "Run"}
        </button>
        {(result || error) && (
          <button type="button" className="btn btn-ghost" data-testid="try-clear" onClick={clear}>
            Clear
          </button>
        )}
      </div>

      {error && (
        <div className="notice notice-error" role="alert" data-testid="try-refused">
          {error}
        </div>
      )}
      {result && <TryResult result={result} />}
    </section>
  );
}
