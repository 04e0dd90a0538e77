"use client";
/**
 * The group editor's "Depends on" section: the columns a row needs filled before the
 * group runs on it (by default the mapped input columns, until the person changes them).
 */
import type { TableView } from "@/contracts/table";
import type { GroupFormState } from "./use-group-form";

/** A checkbox per column; the group's own output columns can't be ticked. */
export function GroupDependencies({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const { errorOf, dependsTouched, resetDependencies, ownOutputs, dependsOn, toggleDependency } =
    state;
  return (
    <section className="editor-section" aria-labelledby={`${ids}-deps`}>
      <div className="row">
        <h3 id={`${ids}-deps`}>Depends on</h3>
        <div className="spacer" />
        {dependsTouched && (
          <button type="button" className="btn btn-ghost btn-small" onClick={resetDependencies}>
            Reset to the input columns
          </button>
        )}
      </div>
      <p className="editor-help">
        A row is ready for this group once these columns are filled (not empty, and not unticked).{" "}
        {dependsTouched ? "" : "By default: the columns mapped to its inputs."}
      </p>
      {errorOf("dependsOn") && <div className="field-error">{errorOf("dependsOn")}</div>}
      {table.columns.length === 0 ? (
        <div className="editor-empty">The table has no columns yet.</div>
      ) : (
        <div className="editor-checks">
          {table.columns.map((c) => {
            const own = ownOutputs.has(c.id);
            return (
              <label
                key={c.id}
                className={`editor-check${own ? " editor-check-off" : ""}`}
                title={own ? "Filled by this group" : undefined}
              >
                <input
                  type="checkbox"
                  name={`dependsOn.${c.id}`}
                  checked={!own && dependsOn.includes(c.id)}
                  disabled={own}
                  onChange={() => toggleDependency(c.id)}
                />
                {c.name}
              </label>
            );
          })}
        </div>
      )}
    </section>
  );
}
