"use client";
/**
 * The Run dialog: before a large or paid run starts, what its dry run found (rows, cells,
 * estimated credits — "at least" when some group's calls cannot be counted ahead, "at most"
 * when a waterfall's steps are all counted — and the cells the enrichment result cache would
 * serve for nothing), an optional credit cap, sent as `maxCredits`, and an optional budget
 * per row, sent as `maxCreditsPerRow` (empty: the table's default, which the dry run names).
 * A run that needs neither starts at once.
 */
import { useState } from "react";
import type { RunEstimate } from "@/contracts/runs";
import { readCreditInput } from "./credit-input";
import { Modal } from "./Dialogs";

/** The caps a person gave the run (each absent when left empty). */
export interface RunCaps {
  maxCredits?: number;
  maxCreditsPerRow?: number;
}

/** Cells above which a run is worth a second look even when it is free. */
export const CONFIRM_CELLS = 1_000;

/** Whether a run with this dry run asks first: large, paid, or of a cost not known ahead. */
export function needsConfirmation(estimate: RunEstimate): boolean {
  return (
    estimate.cells > CONFIRM_CELLS ||
    estimate.estimatedCredits > 0 ||
    estimate.estimate === "lower_bound"
  );
}

export function RunDialog({
  estimate,
  groupNames,
  onRun,
  onClose,
}: {
  estimate: RunEstimate;
  groupNames: Map<string, string>;
  onRun: (caps: RunCaps) => void;
  onClose: () => void;
}) {
  const [cap, setCap] = useState("");
  const [perRow, setPerRow] = useState("");
  const capValue = readCreditInput(cap);
  const capValid = capValue.ok;
  const perRowValue = readCreditInput(perRow);
  const valid = capValid && perRowValue.ok;
  const bound = estimate.estimate === "lower_bound";
  // A waterfall counts every step; with a lower bound elsewhere the figure is neither.
  const atMost = !bound && estimate.upperBound.length > 0;
  const cached = estimate.groups.reduce((n, g) => n + g.cached, 0);
  const figures: [string, string, string][] = [
    ["rows", "Rows", estimate.rows.toLocaleString()],
    ["cells", "Cells", estimate.cells.toLocaleString()],
    [
      "credits",
      "Estimated credits",
      `${bound ? "at least " : atMost ? "at most " : ""}${estimate.estimatedCredits.toLocaleString()}${
        estimate.rowBudgetCapped ? ` (at most ${estimate.maxCreditsPerRow} per row)` : ""
      }`,
    ],
    ...(cached > 0
      ? [
          ["cached", "Served from the cache", `${cached.toLocaleString()} cells (no credits)`] as [
            string,
            string,
            string,
          ],
        ]
      : []),
    ...(estimate.skippedByCondition > 0
      ? [
          [
            "condition",
            "Run condition not met",
            `${estimate.skippedByCondition.toLocaleString()} cells (no credits)`,
          ] as [string, string, string],
        ]
      : []),
  ];
  return (
    <Modal title="Start this run?" onClose={onClose}>
      <table className="table-list" data-testid="run-estimate">
        <tbody>
          {figures.map(([id, label, shown]) => (
            <tr key={id}>
              <td>{label}</td>
              <td data-testid={`run-estimate-${id}`}>{shown}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {bound && (
        <p className="muted">
          Not counted ahead:{" "}
          {estimate.unknown
            .map((u) => `${groupNames.get(u.groupId) ?? u.groupId} (${u.reason})`)
            .join("; ")}
          .
        </p>
      )}
      {estimate.upperBound.length > 0 && (
        <p className="muted" data-testid="run-estimate-upper-bound">
          Counted as if every step ran:{" "}
          {estimate.upperBound.map((u) => groupNames.get(u.groupId) ?? u.groupId).join(", ")} (a
          waterfall pays only the steps it calls, up to the first that finds an answer).
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!valid) return;
          onRun({
            ...(capValue.ok && capValue.value !== null ? { maxCredits: capValue.value } : {}),
            ...(perRowValue.ok && perRowValue.value !== null
              ? { maxCreditsPerRow: perRowValue.value }
              : {}),
          });
        }}
      >
        <div className="field">
          <label htmlFor="max-credits">Credit cap (optional)</label>
          <input
            id="max-credits"
            className={`input${valid ? "" : " invalid"}`}
            inputMode="decimal"
            placeholder="No cap"
            value={cap}
            onChange={(e) => setCap(e.target.value)}
          />
          {capValid ? (
            <span className="muted">
              The run stops once its paid calls have used this many credits; cells it has not
              started stay un-run.
            </span>
          ) : (
            <span className="field-error">
              Enter a number above 0 with at most three decimals, or leave it empty
            </span>
          )}
        </div>
        <div className="field">
          <label htmlFor="max-credits-per-row">Max credits per row (optional)</label>
          <input
            id="max-credits-per-row"
            data-testid="max-credits-per-row"
            className={`input${perRowValue.ok ? "" : " invalid"}`}
            inputMode="decimal"
            placeholder={
              estimate.maxCreditsPerRow === null
                ? "No budget"
                : `Table default: ${estimate.maxCreditsPerRow}`
            }
            value={perRow}
            onChange={(e) => setPerRow(e.target.value)}
          />
          {perRowValue.ok ? (
            <span className="muted">
              A paid call that would take its row past this many credits in the run is not made;
              that cell ends "Over budget" and the other rows go on.
            </span>
          ) : (
            <span className="field-error">
              Enter a number above 0 (up to three decimals), or leave it empty
            </span>
          )}
        </div>
        <div className="row">
          <button className="btn btn-primary" type="submit" disabled={!valid}>
            Run
          </button>
          <button className="btn" type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
