"use client";
/**
 * The group editor's "Only run if" section: the group's run conditions, built with the
 * filter bar's condition builder (column conditions only, never on the group's own output
 * columns). A row where one does not hold ends "Condition not met": nothing is called.
 */
import { useState } from "react";
import type { TableView } from "@/contracts/table";
import { ConditionChips } from "./ConditionChips";
import { ConditionEditor } from "./ConditionEditor";
import type { GroupFormState } from "./use-group-form";

/** The API takes at most this many run conditions. */
const MAX_CONDITIONS = 20;

export function GroupRunIf({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const { form, errorOf, ownOutputs, setRunIf } = state;
  const [adding, setAdding] = useState(false);
  const columns = table.columns.filter((c) => !ownOutputs.has(c.id));
  return (
    <section className="editor-section" aria-labelledby={`${ids}-runif`} data-testid="group-run-if">
      <div className="row">
        <h3 id={`${ids}-runif`}>Only run if</h3>
      </div>
      <p className="editor-help">
        On rows where a condition does not hold, the cell ends “Condition not met”: nothing is
        called or charged, and its output columns are left blank. All conditions must hold.
      </p>
      {errorOf("runIf") && <div className="field-error">{errorOf("runIf")}</div>}
      <div className="row">
        <ConditionChips table={table} where={form.runIf} testId="run-if-chip" onChange={setRunIf} />
        {form.runIf.length === 0 && !adding && <span className="muted">Runs on every row.</span>}
      </div>
      {adding ? (
        <ConditionEditor
          table={table}
          columns={columns}
          embedded
          submitLabel="Add condition"
          onSubmit={(cond) => {
            if ("column" in cond) {
              const key = JSON.stringify(cond);
              if (!form.runIf.some((c) => JSON.stringify(c) === key))
                setRunIf([...form.runIf, cond]);
            }
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <button
          type="button"
          className="btn btn-small"
          data-testid="run-if-add"
          disabled={columns.length === 0 || form.runIf.length >= MAX_CONDITIONS}
          onClick={() => setAdding(true)}
        >
          + Condition
        </button>
      )}
    </section>
  );
}
