"use client";
/**
 * The group editor's outputs section: rows mapping a result of the source (a block or
 * `block.path` of a workflow, an output of an enrichment) to an existing column or a new
 * one, with buttons to add a row or every enrichment output.
 */
import type { TableView } from "@/contracts/table";
import { FieldHint } from "./editor-frame";
import { columnLabel, groupField, NEW_COLUMN, newOutputColumnType } from "./group-form";
import type { GroupFormState } from "./use-group-form";

/** Which result of the source fills which column. */
export function GroupOutputs({
  ids,
  table,
  state,
}: {
  ids: string;
  table: TableView;
  state: GroupFormState;
}) {
  const {
    form,
    errorOf,
    invalid,
    enrichment,
    outputIds,
    owners,
    blocks,
    updateRow,
    newColumnName,
    removeOutput,
    addOutput,
    addAllOutputs,
  } = state;
  return (
    <section className="editor-section" aria-labelledby={`${ids}-outputs`}>
      <h3 id={`${ids}-outputs`}>Outputs</h3>
      <p className="editor-help">
        {form.kind === "waterfall" ? (
          "Name each result of the waterfall and choose its column; each step says which of its outputs gives that result. The first output decides by default whether a step found something."
        ) : form.kind === "workflow" ? (
          <>
            Which result fills which column: a block id (<code>classify</code>) for that block’s
            output, or <code>block.path</code> (<code>fetch.body.name</code>) for a field of it. New
            columns are text columns.
          </>
        ) : (
          "Which enrichment output fills which column. New columns get the output’s type."
        )}
      </p>
      {errorOf("outputs") && <div className="field-error">{errorOf("outputs")}</div>}
      {form.outputs.length === 0 ? (
        <div className="editor-empty">No outputs yet: the group would run but write nothing.</div>
      ) : (
        <div className="editor-outputs">
          {form.outputs.map((row, i) => {
            const fromKey = groupField.outputFrom(row.key);
            const colKey = groupField.outputColumn(row.key);
            const described = enrichment?.outputs.find((o) => o.id === row.from);
            return (
              <div key={row.key} className="editor-output">
                <div>
                  {form.kind === "enrichment" ? (
                    <select
                      className={`input editor-grow${invalid(fromKey)}`}
                      aria-label={`Output ${i + 1}: enrichment output`}
                      name={`outputs.${i}.from`}
                      value={row.from}
                      onChange={(e) => updateRow(row.key, { from: e.target.value }, "from")}
                    >
                      <option value="">Choose an output…</option>
                      {enrichment?.outputs.map((o) => (
                        <option key={o.id} value={o.id}>
                          {o.id} ({o.type})
                        </option>
                      ))}
                      {row.from !== "" && !outputIds?.includes(row.from) && (
                        <option value={row.from}>{row.from} (unknown)</option>
                      )}
                    </select>
                  ) : (
                    <input
                      className={`input editor-grow editor-mono${invalid(fromKey)}`}
                      aria-label={
                        form.kind === "waterfall"
                          ? `Output ${i + 1}: output name`
                          : `Output ${i + 1}: block or block.path`
                      }
                      name={`outputs.${i}.from`}
                      list={form.kind === "waterfall" ? undefined : `${ids}-blocks`}
                      value={row.from}
                      spellCheck={false}
                      autoComplete="off"
                      placeholder={
                        form.kind === "waterfall"
                          ? "output name, e.g. email"
                          : "blockId or blockId.path"
                      }
                      onChange={(e) => updateRow(row.key, { from: e.target.value }, "from")}
                    />
                  )}
                  <FieldHint error={errorOf(fromKey)} help={described?.description} />
                </div>
                <span className="editor-arrow" aria-hidden="true">
                  →
                </span>
                <div className="stack editor-tight">
                  <select
                    className={`input editor-grow${invalid(colKey)}`}
                    aria-label={`Output ${i + 1}: column`}
                    name={`outputs.${i}.column`}
                    value={row.column}
                    onChange={(e) => {
                      const column = e.target.value;
                      const newName =
                        column === NEW_COLUMN && row.newName.trim() === ""
                          ? newColumnName(row, row.from)
                          : row.newName;
                      updateRow(row.key, { column, newName }, "column");
                    }}
                  >
                    <option value="">Choose a column…</option>
                    <option value={NEW_COLUMN}>New column…</option>
                    <optgroup label="Existing columns">
                      {table.columns.map((c) => {
                        const owner = owners.get(c.id);
                        return (
                          <option key={c.id} value={c.id} disabled={owner !== undefined}>
                            {columnLabel(c)}
                            {owner !== undefined ? ` — filled by ${owner}` : ""}
                          </option>
                        );
                      })}
                    </optgroup>
                  </select>
                  {row.column === NEW_COLUMN && (
                    <input
                      className={`input editor-grow${invalid(colKey)}`}
                      aria-label={`Output ${i + 1}: new column name`}
                      name={`outputs.${i}.newName`}
                      value={row.newName}
                      maxLength={200}
                      placeholder="New column name"
                      onChange={(e) => updateRow(row.key, { newName: e.target.value }, "column")}
                    />
                  )}
                  <FieldHint
                    error={errorOf(colKey)}
                    help={
                      row.column === NEW_COLUMN
                        ? `Creates a ${newOutputColumnType(form.kind, row.from, enrichment)} column.`
                        : undefined
                    }
                  />
                </div>
                <button
                  type="button"
                  className="btn btn-ghost btn-small"
                  aria-label={`Remove output ${i + 1}`}
                  title="Remove this output"
                  onClick={() => removeOutput(row.key)}
                >
                  ✕
                </button>
              </div>
            );
          })}
        </div>
      )}
      <datalist id={`${ids}-blocks`}>
        {blocks.map((b) => (
          <option key={b.id} value={b.id}>
            {b.type}
          </option>
        ))}
      </datalist>
      <div className="row editor-actions">
        <button type="button" className="btn btn-small" onClick={addOutput}>
          + Add output
        </button>
        {form.kind === "enrichment" && enrichment && (
          <button
            type="button"
            className="btn btn-small"
            onClick={addAllOutputs}
            disabled={enrichment.outputs.every((o) => form.outputs.some((r) => r.from === o.id))}
          >
            Add all outputs ({enrichment.outputs.length})
          </button>
        )}
      </div>
    </section>
  );
}
