"use client";
/**
 * What happened in one cell, at a glance: a dot, a word, and more on hover; a click on
 * the word opens the cell's details (its error and attempt history).
 */
import type { Group } from "@/contracts/table";
import { assertNever, type CellOutcome } from "@/domain/statuses";
import type { CellView } from "./merge";

export interface CellStatusProps {
  cell: CellView | undefined;
  group: Group;
  onApprove: () => void;
  onDetails: () => void;
}

function describeOutcome(outcome: CellOutcome): { label: string; tone: string; title: string } {
  switch (outcome) {
    case "ok":
      return { label: "Done", tone: "completed", title: "Completed" };
    case "skipped":
      return { label: "Skipped", tone: "skipped", title: "A required input is empty" };
    case "not_found":
      return { label: "Not found", tone: "not_found", title: "No provider found anything" };
    case "condition_not_met":
      return {
        label: "Condition not met",
        tone: "skipped",
        title: "The column's run condition did not hold on this row: nothing was called",
      };
    case "over_budget":
      return {
        label: "Over budget",
        tone: "not_found",
        title: "A paid call would have passed the row's credit budget: it was not made",
      };
    default:
      return assertNever(outcome);
  }
}

/** "step 2 (company_lookup)": a waterfall's step as people count them, with what it runs. */
export function stepName(group: Group, step: number): string {
  const s = group.kind === "waterfall" ? group.steps[step - 1] : undefined;
  if (!s) return `step ${step}`;
  return `step ${step} (${"enrichmentId" in s ? s.enrichmentId : `workflow ${s.workflowId}`})`;
}

export function describeCell(
  cell: CellView,
  group?: Group,
): { label: string; tone: string; title: string } {
  if (group?.kind === "waterfall" && cell.status === "completed" && cell.winningStep) {
    const name = stepName(group, cell.winningStep);
    return { label: `Found · ${name}`, tone: "completed", title: `The answer of ${name}` };
  }
  if (group?.kind === "waterfall" && cell.status === "completed" && cell.outcome === "not_found")
    return { label: "Not found", tone: "not_found", title: "No step found a valid answer" };
  switch (cell.status) {
    case "queued":
      return { label: "Queued", tone: "queued", title: "Waiting for a worker" };
    case "running": {
      const blocks = cell.runningBlockIds ?? [];
      return {
        label: blocks.length > 0 ? `Running · ${blocks.join(", ")}` : "Running",
        tone: "running",
        title: blocks.length > 0 ? `Running block ${blocks.join(", ")}` : "Running",
      };
    }
    case "paused":
      return { label: "Paused", tone: "paused", title: "Waiting for approval or a long wait" };
    case "completed":
      return describeOutcome(cell.outcome ?? "ok");
    case "error":
      return { label: "Error", tone: "error", title: cell.error ?? "Failed" };
    case "cancelled":
      return { label: "Stopped", tone: "cancelled", title: "Stopped before it finished" };
    default: {
      const never: never = cell.status;
      return { label: String(never), tone: "queued", title: "" };
    }
  }
}

export function CellStatus({ cell, group, onApprove, onDetails }: CellStatusProps) {
  if (!cell) return <span className="empty">—</span>;
  const d = describeCell(cell, group);
  return (
    <span
      className={`status status-${d.tone}`}
      title={d.title}
      data-status={cell.status}
      data-outcome={cell.outcome ?? ""}
      data-group={group.id}
    >
      <span className="dot" />
      {cell.status === "error" ? (
        <button type="button" className="linklike" onClick={onDetails}>
          {cell.error ? `Error: ${cell.error}` : "Error"}
        </button>
      ) : (
        <button type="button" className="linklike" onClick={onDetails}>
          {d.label}
        </button>
      )}
      {cell.status === "paused" && (
        <button type="button" className="btn btn-small" onClick={onApprove}>
          Approve…
        </button>
      )}
    </span>
  );
}
