"use client";
/** Tables: every table of the workspace, a new empty one, one made from a CSV file, delete. */
import { useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError, describeRefusal } from "@/ui/api";
import { importCsv } from "@/ui/api-raw";
import { Shell } from "@/ui/shell";
import { planCsvFile } from "@/ui/tables/csv-table-plan";
import { useListFetch } from "@/ui/use-list-fetch";

type Listed = Schemas["TableView"];

interface ImportState {
  file: string;
  phase: "reading" | "uploading" | "importing" | "failed";
  fraction: number;
  error?: string;
}

const readTables = async (): Promise<Listed[]> => (await answer(api.GET("/api/tables"))).tables;

export default function TablesPage() {
  const { list: tables, error, setError, reload: load } = useListFetch(readTables);
  const [name, setName] = useState("");
  const [importing, setImporting] = useState<ImportState | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const createEmpty = async () => {
    setError(null);
    try {
      const t = await answer(
        api.POST("/api/tables", {
          body: {
            name: name.trim(),
            columns: [{ id: "name", name: "Name", type: "text" }],
            groups: [],
          },
        }),
      );
      window.location.assign(`/tables/${t.id}`);
    } catch (err) {
      setError(describeError(err));
    }
  };

  const createFromCsv = async (file: File) => {
    setError(null);
    // Names are stored as given, and white space at either end is refused: trim a file's.
    const tableName =
      file.name
        .replace(/\.csv$/i, "")
        .trim()
        .slice(0, 200)
        .trim() || "Imported";
    setImporting({ file: file.name, phase: "reading", fraction: 0 });
    let tableId: string | null = null;
    try {
      // A file the import would refuse is refused here, in its words, before a table exists.
      const plan = await planCsvFile(file);
      if (!plan.ok) {
        setImporting({
          file: file.name,
          phase: "failed",
          fraction: 0,
          error: describeRefusal(plan.reason),
        });
        return;
      }
      const columns = plan.value;
      const t = await answer(
        api.POST("/api/tables", { body: { name: tableName, columns, groups: [] } }),
      );
      tableId = t.id;
      setImporting({ file: file.name, phase: "uploading", fraction: 0 });
      await importCsv(t.id, file, (f) =>
        setImporting({ file: file.name, phase: f >= 1 ? "importing" : "uploading", fraction: f }),
      );
      window.location.assign(`/tables/${t.id}`);
    } catch (err) {
      // Nothing half-made: the import is all or nothing, so the empty table goes too.
      if (tableId)
        await answer(api.DELETE("/api/tables/{id}", { params: { path: { id: tableId } } })).catch(
          () => undefined,
        );
      setImporting({ file: file.name, phase: "failed", fraction: 0, error: describeError(err) });
    }
  };

  const remove = async (t: Listed) => {
    if (
      !window.confirm(`Delete “${t.name}” and its ${t.rowCount ?? 0} rows? This cannot be undone.`)
    )
      return;
    try {
      await answer(api.DELETE("/api/tables/{id}", { params: { path: { id: t.id } } }));
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <Shell>
      <div className="page-head">
        <h1>Tables</h1>
        <div className="spacer" />
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void createEmpty();
          }}
        >
          <input
            className="input"
            aria-label="New table name"
            placeholder="New table name"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <button className="btn btn-primary" type="submit" disabled={name.trim() === ""}>
            Create table
          </button>
        </form>
        <button className="btn" type="button" onClick={() => fileInput.current?.click()}>
          Import CSV…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".csv,text/csv"
          data-testid="csv-file"
          style={{ display: "none" }}
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (file) void createFromCsv(file);
          }}
        />
      </div>
      {error && <div className="notice notice-error">{error}</div>}
      {importing && (
        <div
          className={`notice ${importing.phase === "failed" ? "notice-error" : ""}`}
          data-testid="import-progress"
        >
          {importing.phase === "failed" ? (
            <>
              Importing {importing.file} failed: {importing.error}{" "}
              <button className="btn btn-small" type="button" onClick={() => setImporting(null)}>
                Dismiss
              </button>
            </>
          ) : (
            <div className="row">
              <span>
                {importing.phase === "reading" && `Reading ${importing.file}…`}
                {/* The server inserts rows as they arrive: the bytes sent track the import. */}
                {importing.phase === "uploading" &&
                  `Importing ${importing.file}… ${Math.round(importing.fraction * 100)}%`}
                {importing.phase === "importing" && `Finishing ${importing.file}…`}
              </span>
              <div className="progress" style={{ flex: 1 }}>
                <div style={{ width: `${Math.round(importing.fraction * 100)}%` }} />
              </div>
            </div>
          )}
        </div>
      )}
      <div className="card" style={{ padding: 0 }}>
        {tables === null ? (
          <p className="muted" style={{ padding: 16 }}>
            Loading…
          </p>
        ) : tables.length === 0 ? (
          <div style={{ padding: 32, textAlign: "center" }}>
            <h2>No tables yet</h2>
            <p className="muted">
              Create an empty table, or import a CSV file: its header row becomes the columns.
            </p>
          </div>
        ) : (
          <table className="table-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Columns</th>
                <th>Groups</th>
                <th>Rows</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tables.map((t) => (
                <tr key={t.id}>
                  <td>
                    <a href={`/tables/${t.id}`}>{t.name}</a>
                  </td>
                  <td className="muted">{t.columns.length}</td>
                  <td className="muted">
                    {t.groups.map((g) => g.name).join(", ") || <span className="empty">none</span>}
                  </td>
                  <td className="muted">{(t.rowCount ?? 0).toLocaleString()}</td>
                  <td style={{ textAlign: "right" }}>
                    <button
                      className="btn btn-small btn-danger"
                      type="button"
                      onClick={() => void remove(t)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Shell>
  );
}
