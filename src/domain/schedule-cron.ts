/**
 * Schedules' times: a five-field cron read in an IANA time zone, by cron-parser (which
 * keeps wall-clock times across DST changes: a time skipped by a spring-forward fires once
 * just after the gap, a time repeated by a fall-back fires once). Pure: `now` is always
 * passed in, so the scheduler's clock can be a test's.
 */
import { CronExpressionParser } from "cron-parser";

/** Why a cron expression is refused (null: fine). Five fields: at most once a minute. */
export function cronProblem(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5)
    return "a cron has five fields (minute hour day-of-month month day-of-week), at most once a minute";
  try {
    CronExpressionParser.parse(fields.join(" "), { tz: "UTC" });
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : "not a cron expression";
  }
}

/** Whether the name is a time zone this runtime knows (IANA, or UTC). */
export function isTimeZone(name: string): boolean {
  if (name.trim() === "" || name !== name.trim()) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first due time strictly after `after`. A checked cron and zone (cronProblem,
 * isTimeZone) always have one.
 */
export function nextDue(cron: string, timezone: string, after: Date): Date {
  const it = CronExpressionParser.parse(cron.trim().split(/\s+/).join(" "), {
    currentDate: after,
    tz: timezone,
  });
  return it.next().toDate();
}
