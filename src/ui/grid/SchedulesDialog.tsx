"use client";
/**
 * A table's schedules: each one's cron and zone, mode, next and last run (and skipped due
 * times), a switch and Delete; a form adds one. What the API refuses (a bad cron or zone,
 * the 20 cap) shows as its message.
 */
import { useCallback, useEffect, useState } from "react";
import { RUN_MODES } from "@/domain/statuses";
import { answer, api, describeError } from "../api";
import { Modal } from "./Dialogs";
import { NEW_SCHEDULE, type ScheduleForm, toBody, whenText } from "./schedule-form";

type Schedule = Awaited<ReturnType<typeof listSchedules>>["schedules"][number];

async function listSchedules(tableId: string) {
  return answer(api.GET("/api/tables/{id}/schedules", { params: { path: { id: tableId } } }));
}

export function SchedulesDialog({ tableId, onClose }: { tableId: string; onClose: () => void }) {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [form, setForm] = useState<ScheduleForm>(NEW_SCHEDULE);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = useCallback(async () => {
    try {
      setSchedules((await listSchedules(tableId)).schedules);
    } catch (err) {
      setError(describeError(err));
    }
  }, [tableId]);
  useEffect(() => {
    void reload();
  }, [reload]);

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
      await reload();
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const path = (scheduleId: string) => ({ params: { path: { id: tableId, scheduleId } } });
  const create = async () => {
    const read = toBody(form);
    if (!read.ok) return setError(read.message);
    const made = await act(() =>
      answer(
        api.POST("/api/tables/{id}/schedules", {
          params: { path: { id: tableId } },
          body: read.body,
        }),
      ),
    );
    if (made) setForm(NEW_SCHEDULE);
  };

  return (
    <Modal title="Schedules" onClose={onClose}>
      {schedules === null ? (
        <p className="muted">Loading…</p>
      ) : schedules.length === 0 ? (
        <p className="muted" data-testid="no-schedules">
          No schedules: this table runs only when someone starts it.
        </p>
      ) : (
        <table className="table-list" data-testid="schedules">
          <thead>
            <tr>
              <th>Cron</th>
              <th>Mode</th>
              <th>Next run</th>
              <th>Last run</th>
              <th>On</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => (
              <tr key={s.id} data-testid="schedule-row" data-schedule-id={s.id}>
                <td>
                  <code>{s.cron}</code> <span className="muted">{s.timezone}</span>
                </td>
                <td>
                  {s.mode}
                  {s.staleAfterHours !== undefined && ` > ${s.staleAfterHours} h`}
                </td>
                <td data-testid="schedule-next">{whenText(s.nextRunAt, s.timezone)}</td>
                <td data-testid="schedule-last">
                  {whenText(s.lastRunAt, s.timezone)}
                  {s.skipped > 0 && <span className="muted"> ({s.skipped} skipped)</span>}
                  {s.lastError && <div className="field-error">{s.lastError}</div>}
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label="Enabled"
                    data-testid="schedule-enabled"
                    checked={s.enabled}
                    disabled={busy}
                    onChange={(e) => {
                      const enabled = e.currentTarget.checked;
                      void act(() =>
                        answer(
                          api.PATCH("/api/tables/{id}/schedules/{scheduleId}", {
                            ...path(s.id),
                            body: { enabled },
                          }),
                        ),
                      );
                    }}
                  />
                </td>
                <td>
                  <button
                    type="button"
                    className="btn btn-small btn-danger"
                    data-testid="schedule-delete"
                    disabled={busy}
                    onClick={() =>
                      void act(() =>
                        answer(api.DELETE("/api/tables/{id}/schedules/{scheduleId}", path(s.id))),
                      )
                    }
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        className="row"
        style={{ flexWrap: "wrap", gap: 8, marginTop: 12, alignItems: "flex-end" }}
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <div className="field">
          <label htmlFor="schedule-cron">Cron</label>
          <input
            id="schedule-cron"
            className="input code"
            value={form.cron}
            onChange={(e) => setForm({ ...form, cron: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="schedule-timezone">Time zone</label>
          <input
            id="schedule-timezone"
            className="input"
            value={form.timezone}
            onChange={(e) => setForm({ ...form, timezone: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="schedule-mode">Mode</label>
          <select
            id="schedule-mode"
            className="input"
            value={form.mode}
            onChange={(e) => {
              const mode = RUN_MODES.find((m) => m === e.target.value);
              if (mode) setForm({ ...form, mode });
            }}
          >
            {RUN_MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        {form.mode === "stale" && (
          <div className="field">
            <label htmlFor="schedule-stale">Stale after (hours)</label>
            <input
              id="schedule-stale"
              className="input"
              inputMode="decimal"
              value={form.staleAfterHours}
              onChange={(e) => setForm({ ...form, staleAfterHours: e.target.value })}
            />
          </div>
        )}
        <label className="row" style={{ gap: 4 }}>
          <input
            type="checkbox"
            checked={form.enabled}
            onChange={(e) => setForm({ ...form, enabled: e.target.checked })}
          />
          Enabled
        </label>
        <button
          className="btn btn-primary"
          type="submit"
          disabled={busy}
          data-testid="schedule-add"
        >
          Add schedule
        </button>
      </form>
      {error && (
        <div className="notice notice-error" data-testid="schedule-error">
          {error}
        </div>
      )}
    </Modal>
  );
}
