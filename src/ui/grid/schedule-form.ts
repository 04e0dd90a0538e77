/**
 * The Schedules dialog's pure parts: the create form read into the API's body (or what to
 * fix), and how a schedule's times read.
 */
import type { RunMode } from "@/domain/statuses";

export interface ScheduleForm {
  cron: string;
  timezone: string;
  mode: RunMode;
  /** Mode stale only: text as typed. */
  staleAfterHours: string;
  enabled: boolean;
}

/** What the dialog sends to POST /schedules. */
export interface CreateBody {
  cron: string;
  timezone: string;
  mode: RunMode;
  enabled: boolean;
  staleAfterHours?: number;
}

export const NEW_SCHEDULE: ScheduleForm = {
  cron: "0 * * * *",
  timezone: "UTC",
  mode: "incomplete",
  staleAfterHours: "24",
  enabled: true,
};

/** The body of POST /schedules, or what the form must fix first (the API checks the rest). */
export function toBody(
  form: ScheduleForm,
): { ok: true; body: CreateBody } | { ok: false; message: string } {
  const cron = form.cron.trim();
  if (cron.split(/\s+/).length !== 5)
    return { ok: false, message: "A cron has five fields: minute hour day month weekday" };
  const timezone = form.timezone.trim() || "UTC";
  if (form.mode !== "stale")
    return { ok: true, body: { cron, timezone, mode: form.mode, enabled: form.enabled } };
  const hours = Number(form.staleAfterHours);
  if (!Number.isFinite(hours) || hours <= 0 || form.staleAfterHours.trim() === "")
    return { ok: false, message: "Stale after: a number of hours above 0" };
  return {
    ok: true,
    body: { cron, timezone, mode: "stale", enabled: form.enabled, staleAfterHours: hours },
  };
}

/** A schedule's time as the dialog shows it: in the schedule's zone, or a dash. */
export function whenText(iso: string | null, timezone: string): string {
  if (!iso) return "—";
  try {
    return new Date(iso).toLocaleString("en-GB", {
      timeZone: timezone,
      dateStyle: "medium",
      timeStyle: "short",
    });
  } catch {
    return new Date(iso).toISOString();
  }
}
