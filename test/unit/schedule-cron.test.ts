/**
 * Schedules' times (domain/schedule-cron.ts): five fields only, IANA zones only, and the
 * next due time keeps the wall clock across DST changes without skipping or doubling a day.
 */
import { describe, expect, it } from "vitest";
import { cronProblem, isTimeZone, nextDue } from "@/domain/schedule-cron";

/** The due times after `from`, n of them, as ISO strings. */
function dueTimes(cron: string, tz: string, from: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < n; i++) {
    at = nextDue(cron, tz, at);
    out.push(at.toISOString());
  }
  return out;
}

describe("schedule cron", () => {
  it("takes five fields and refuses seconds, junk and out-of-range values", () => {
    expect(cronProblem("*/5 * * * *")).toBeNull();
    expect(cronProblem(" 30 2 * * 1-5 ")).toBeNull();
    expect(cronProblem("* * * * * *")).toMatch(/five fields/);
    expect(cronProblem("* * * *")).toMatch(/five fields/);
    expect(cronProblem("61 * * * *")).not.toBeNull();
    expect(cronProblem("a b c d e")).not.toBeNull();
  });

  it("knows IANA zones and refuses other names", () => {
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });

  it("the next due time is strictly after the time given", () => {
    expect(nextDue("* * * * *", "UTC", new Date("2026-01-01T10:00:00Z")).toISOString()).toBe(
      "2026-01-01T10:01:00.000Z",
    );
    expect(nextDue("0 * * * *", "UTC", new Date("2026-01-01T10:00:30Z")).toISOString()).toBe(
      "2026-01-01T11:00:00.000Z",
    );
  });

  it("02:30 in Berlin fires once a day across spring-forward (the gap: 03:30 CEST) and fall-back (the first 02:30)", () => {
    expect(dueTimes("30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", 4)).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:30:00.000Z", // 02:30 does not exist: 03:30 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
      "2026-03-31T00:30:00.000Z",
    ]);
    expect(dueTimes("30 2 * * *", "Europe/Berlin", "2026-10-23T12:00:00Z", 4)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 happens twice: only the first
      "2026-10-26T01:30:00.000Z", // 02:30 CET
      "2026-10-27T01:30:00.000Z",
    ]);
  });

  it("hourly in New York stays one an hour through both changes", () => {
    const spring = dueTimes("0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", 4);
    const fall = dueTimes("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 4);
    for (const times of [spring, fall]) {
      const gaps = times.slice(1).map((t, i) => Date.parse(t) - Date.parse(times[i] ?? ""));
      expect(gaps).toEqual([3_600_000, 3_600_000, 3_600_000]);
    }
  });

  it("refuses H (cron-parser draws it again on every parse, so the time would move)", () => {
    for (const cron of ["H * * * *", "H/5 * * * *", "0 H * * *", "1,H * * * *"])
      expect(cronProblem(cron), cron).toMatch(/`H`/);
    expect(cronProblem("0 2 * * thu")).toBeNull();
  });

  it("never answers a time at or before the one given, in zones with 15- and 30-minute shifts", () => {
    const cases: [string, string][] = [
      ["Pacific/Chatham", "2026-04-04T13:00:03Z"], // cron-parser alone: 12:15Z
      ["Australia/Lord_Howe", "2026-04-04T14:00:03Z"], // cron-parser alone: 14:00Z
    ];
    for (const [tz, from] of cases) {
      const next = nextDue("0 * * * *", tz, new Date(from));
      expect(next.getTime(), tz).toBeGreaterThan(Date.parse(from));
    }
    // The Chatham fall-back repeats 03:00: the first one is not skipped.
    expect(nextDue("0 * * * *", "Pacific/Chatham", new Date("2026-04-04T13:00:03Z"))).toEqual(
      new Date("2026-04-04T13:15:00Z"),
    );
    // Hourly through both nights: every gap at least a quarter of an hour.
    for (const [tz, from] of [
      ["Pacific/Chatham", "2026-04-04T10:00:00Z"],
      ["Australia/Lord_Howe", "2026-04-04T11:00:00Z"],
    ] as const) {
      const times = dueTimes("0 * * * *", tz, from, 8);
      const gaps = times.slice(1).map((t, i) => Date.parse(t) - Date.parse(times[i] ?? ""));
      for (const gap of gaps)
        expect(gap, `${tz} ${times.join(" ")}`).toBeGreaterThanOrEqual(900_000);
    }
  });
});
