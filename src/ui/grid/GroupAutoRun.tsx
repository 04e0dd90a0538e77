"use client";
/**
 * The group editor's "Run automatically" switch, with what it will do: a warning when
 * no dependency would ever trigger it, and what saving starts on rows already ready.
 */
import type { Group, TableView } from "@/contracts/table";
import { credits } from "./group-form";
import type { GroupFormState } from "./use-group-form";

/** Whether the group runs by itself once its dependencies are filled. */
export function GroupAutoRun({
  table,
  group,
  state,
}: {
  table: TableView;
  group?: Group | undefined;
  state: GroupFormState;
}) {
  const { form, errorOf, update, dependsOn, enrichment } = state;
  return (
    <section className="editor-section">
      <label className="editor-check editor-toggle">
        <input
          type="checkbox"
          name="autoRun"
          checked={form.autoRun}
          onChange={(e) => update({ autoRun: e.target.checked }, "autoRun")}
        />
        <span>
          <strong>Run automatically</strong>
          <span className="editor-help">
            Runs by itself on a row once the columns it depends on are filled, and re-runs when they
            change (its output columns are cleared first). Without it, the group runs only when you
            start a run.
          </span>
        </span>
      </label>
      {errorOf("autoRun") && <div className="field-error">{errorOf("autoRun")}</div>}
      {form.autoRun && dependsOn.length === 0 && (
        <div className="editor-warn">
          Tick at least one column under “Depends on”: with none, the group never runs by itself.
        </div>
      )}
      {form.autoRun && !group?.autoRun && dependsOn.length > 0 && table.rowCount > 0 && (
        <div className="editor-help">
          When you save, it also starts on the rows of this table that are already ready.
          {enrichment && enrichment.cost > 0
            ? ` Each successful lookup costs ${credits(enrichment.cost)}.`
            : ""}
        </div>
      )}
    </section>
  );
}
