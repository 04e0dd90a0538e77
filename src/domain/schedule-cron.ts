/**
 * Schedules' times: a five-field cron read in an IANA time zone, by cron-parser (which
 * keeps wall-clock times across DST changes: a time skipped by a spring-forward fires once,
 * shifted by the gap — 02:30 on Berlin's spring-forward day fires at 03:30 CEST — and a time
 * repeated by a fall-back fires once). Pure: `now` is always passed in, so the scheduler's
 * clock can be a test's. Invariant: nextDue returns a time strictly after the one given, or
 * throws; cron-parser does not always (zones with 15/30-minute shifts), so it is checked.
 */
import { CronExpressionParser } from "cron-parser";

/** Why a cron expression is refused (null: fine). Five fields: at most once a minute. */
export function cronProblem(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5)
    return "a cron has five fields (minute hour day-of-month month day-of-week), at most once a minute";
  // cron-parser reads `H` as a random value drawn again on every parse: each look would
  // move the schedule's time.
  if (fields.some((f) => /(^|,)h/i.test(f)))
    return "`H` (a hashed value) is not supported: give the minute and hour";
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

/** How many wrong answers (at or before `after`) nextDue steps past before it gives up. */
const MAX_STEPS = 60;

/**
 * The first due time strictly after `after`. Around 15- and 30-minute DST shifts
 * (Pacific/Chatham, Australia/Lord_Howe) cron-parser can answer a time at or before
 * `after`: its iterator is asked once more, then the search restarts a minute later at a time,
 * so a wrong answer never becomes a due time in the past (which would fire every pass).
 * Throws when cron-parser fails from the later start too (it can, for about a day, around
 * Lord_Howe's change: "loop limit exceeded", after ~1 s of work each, so it is not retried
 * further) or finds nothing after; the scheduler then looks again an hour later.
 */
export function nextDue(cron: string, timezone: string, after: Date): Date {
  const expression = cron.trim().split(/\s+/).join(" ");
  const parse = (from: Date) =>
    CronExpressionParser.parse(expression, { currentDate: from, tz: timezone });
  try {
    const it = parse(after);
    const first = it.next().toDate();
    if (first > after) return first;
    const second = it.next().toDate();
    if (second > after) return second;
  } catch {
    // Near a shift cron-parser can fail from one start and not from a minute later (hourly
    // in Lord_Howe from 14:00:00Z on its fall-back day); a failure below is final.
  }
  for (let step = 1; step <= MAX_STEPS; step++) {
    const next = parse(new Date(after.getTime() + step * 60_000))
      .next()
      .toDate();
    if (next > after) return next;
  }
  throw new Error(`no due time after ${after.toISOString()} for "${expression}" in ${timezone}`);
}
