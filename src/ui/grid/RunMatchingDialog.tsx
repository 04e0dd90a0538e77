"use client";
/**
 * Run ▾ › Run matching…: a small condition builder (the filter bar's condition editor)
 * and a mode; the run starts with those conditions as its `where`, so it takes exactly
 * the rows such a filter shows. It opens with the grid's current filter.
 */
import { useState } from "react";
import type { Group, TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import type { RunMode } from "@/domain/statuses";
import { ConditionChips } from "./ConditionChips";
import { ConditionEditor } from "./ConditionEditor";
import { Modal, StaleHoursField, staleHours } from "./Dialogs";
import { withCondition } from "./row-query";

const MODES: { mode: RunMode; label: string }[] = [
  { mode: "all", label: "All cells" },
  { mode: "incomplete", label: "Incomplete cells" },
  { mode: "new", label: "Never-run cells" },
  { mode: "failed", label: "Failed cells (last attempt errored)" },
  { mode: "stale", label: "Stale cells (completed long ago, or never run)" },
];

export function RunMatchingDialog({
  table,
  group,
  initial,
  onRun,
  onClose,
}: {
  table: TableView;
  group: Group | null;
  initial: WhereCondition[];
  onRun(req: { mode: RunMode; where: WhereCondition[]; staleAfterHours?: number }): void;
  onClose(): void;
}) {
  const [where, setWhere] = useState<WhereCondition[]>(initial);
  const [mode, setMode] = useState<RunMode>("all");
  const [hours, setHours] = useState("24");
  const staleAfterHours = staleHours(hours);
  return (
    <Modal title={`Run matching rows${group ? ` of “${group.name}”` : ""}`} onClose={onClose}>
      <div className="stack" data-testid="run-matching">
        <div className="filter-bar">
          {where.length === 0 && <span className="muted">No conditions yet: add one.</span>}
          <ConditionChips
            table={table}
            where={where}
            testId="run-matching-chip"
            onChange={setWhere}
          />
        </div>
        <ConditionEditor
          table={table}
          submitLabel="Add condition"
          onSubmit={(cond) => setWhere(withCondition(where, cond))}
        />
        <div className="field">
          <label htmlFor="run-matching-mode">Cells to run</label>
          <select
            id="run-matching-mode"
            className="input"
            value={mode}
            onChange={(e) => setMode(e.target.value as RunMode)}
          >
            {MODES.map((m) => (
              <option key={m.mode} value={m.mode}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
        {mode === "stale" && (
          <StaleHoursField id="run-matching-stale" hours={hours} onChange={setHours} />
        )}
        <div>
          <button
            type="button"
            className="btn btn-primary"
            data-testid="run-matching-start"
            disabled={where.length === 0 || (mode === "stale" && staleAfterHours === null)}
            onClick={() =>
              onRun(
                mode === "stale" && staleAfterHours !== null
                  ? { mode, where, staleAfterHours }
                  : { mode, where },
              )
            }
          >
            Run matching rows
          </button>
        </div>
      </div>
    </Modal>
  );
}
