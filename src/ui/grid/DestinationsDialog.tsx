"use client";
/**
 * The toolbar's Destinations button and its dialog: a table's destinations (where its
 * finished rows are sent), each with its switch, a Delete, and its recent failures
 * (failed deliveries and those being retried, with why); a form adds one and shows its
 * signing secret, once.
 */
import { useCallback, useEffect, useState } from "react";
import type { CreatedDestination, DeliveryView, DestinationView } from "@/contracts/destinations";
import { answer, api, describeError } from "../api";
import { Modal } from "./Dialogs";
import { PROBLEMS_SHOWN, problemLine } from "./destination-problems";

export function DestinationsButton({ tableId }: { tableId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn"
        data-testid="destinations-open"
        onClick={() => setOpen(true)}
      >
        Destinations
      </button>
      {open && <DestinationsDialog tableId={tableId} onClose={() => setOpen(false)} />}
    </>
  );
}

/** The newest deliveries with an error (failed, or being retried), filtered by the server. */
async function problemsOf(tableId: string, destinationId: string): Promise<DeliveryView[]> {
  const page = await answer(
    api.GET("/api/tables/{id}/destinations/{destinationId}/deliveries", {
      params: {
        path: { id: tableId, destinationId },
        query: { withError: "true", limit: PROBLEMS_SHOWN },
      },
    }),
  );
  return page.deliveries;
}

function DestinationsDialog({ tableId, onClose }: { tableId: string; onClose: () => void }) {
  const [list, setList] = useState<DestinationView[] | null>(null);
  const [problems, setProblems] = useState<Record<string, DeliveryView[]>>({});
  const [created, setCreated] = useState<CreatedDestination | null>(null);
  const [url, setUrl] = useState("");
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const { destinations } = await answer(
        api.GET("/api/tables/{id}/destinations", { params: { path: { id: tableId } } }),
      );
      setList(destinations);
      const each = await Promise.all(destinations.map((d) => problemsOf(tableId, d.id)));
      setProblems(Object.fromEntries(destinations.map((d, i) => [d.id, each[i] ?? []])));
    } catch (err) {
      setError(describeError(err));
    }
  }, [tableId]);

  useEffect(() => {
    void load();
  }, [load]);

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      await load();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const add = () =>
    act(async () => {
      const d = await answer(
        api.POST("/api/tables/{id}/destinations", {
          params: { path: { id: tableId } },
          body: name.trim() === "" ? { url: url.trim() } : { url: url.trim(), name: name.trim() },
        }),
      );
      setCreated(d);
      setUrl("");
      setName("");
    });

  const path = (destinationId: string) => ({ params: { path: { id: tableId, destinationId } } });

  return (
    <Modal title="Destinations" onClose={onClose}>
      <p className="muted" style={{ marginTop: 0 }}>
        Each row is sent (a signed POST) to every enabled destination once none of its cells is
        queued, running or paused.
      </p>
      {created && (
        <div className="notice notice-ok" data-testid="destination-secret">
          Signing secret of {created.name ?? created.url}, shown only now:{" "}
          <code data-testid="destination-secret-value">{created.secret}</code>
        </div>
      )}
      {list === null ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        <p className="muted" data-testid="destinations-empty">
          No destination yet.
        </p>
      ) : (
        <ul className="destination-list" data-testid="destination-list">
          {list.map((d) => (
            <li key={d.id} data-testid="destination" data-id={d.id}>
              <div className="row" style={{ gap: 8 }}>
                <label className="row" style={{ gap: 6 }}>
                  <input
                    type="checkbox"
                    role="switch"
                    data-testid="destination-enabled"
                    checked={d.enabled}
                    aria-checked={d.enabled}
                    disabled={busy}
                    onChange={(e) => {
                      const enabled = e.currentTarget.checked;
                      void act(() =>
                        answer(
                          api.PATCH("/api/tables/{id}/destinations/{destinationId}", {
                            ...path(d.id),
                            body: { enabled },
                          }),
                        ),
                      );
                    }}
                  />
                  <strong>{d.name ?? "Destination"}</strong>
                </label>
                <code className="muted">{d.url}</code>
                <div className="spacer" />
                <button
                  type="button"
                  className="btn btn-danger btn-small"
                  data-testid="destination-delete"
                  disabled={busy}
                  onClick={() =>
                    void act(() =>
                      answer(
                        api.DELETE("/api/tables/{id}/destinations/{destinationId}", path(d.id)),
                      ),
                    )
                  }
                >
                  Delete
                </button>
              </div>
              {(problems[d.id] ?? []).length > 0 && (
                <ul className="muted" data-testid="destination-failures">
                  {(problems[d.id] ?? []).map((p) => (
                    <li key={p.id} data-testid="destination-failure" data-status={p.status}>
                      row {p.rowId}: {problemLine(p)}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {error && <div className="notice notice-error">{error}</div>}
      <form
        className="row"
        style={{ gap: 8, marginTop: 12 }}
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <input
          className="input"
          aria-label="Destination URL"
          data-testid="destination-url"
          placeholder="https://example.com/cellflow"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <input
          className="input"
          aria-label="Destination name"
          data-testid="destination-name"
          placeholder="Name (optional)"
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <button className="btn btn-primary" type="submit" disabled={busy || url.trim() === ""}>
          Add
        </button>
        <button type="button" className="btn btn-ghost" disabled={busy} onClick={() => void load()}>
          Refresh
        </button>
      </form>
    </Modal>
  );
}
