/** The Schedules dialog's form (ui/grid/schedule-form.ts): what it sends, what it refuses. */
import { describe, expect, it } from "vitest";
import { NEW_SCHEDULE, toBody, whenText } from "@/ui/grid/schedule-form";

describe("the schedule form", () => {
  it("sends the cron trimmed, UTC for an empty zone, and hours only with mode stale", () => {
    expect(toBody({ ...NEW_SCHEDULE, cron: " 0 6 * * 1 ", timezone: "" })).toEqual({
      ok: true,
      body: { cron: "0 6 * * 1", timezone: "UTC", mode: "incomplete", enabled: true },
    });
    expect(toBody({ ...NEW_SCHEDULE, mode: "stale", staleAfterHours: "12" })).toEqual({
      ok: true,
      body: {
        cron: "0 * * * *",
        timezone: "UTC",
        mode: "stale",
        enabled: true,
        staleAfterHours: 12,
      },
    });
  });

  it("asks for five cron fields and positive stale hours", () => {
    expect(toBody({ ...NEW_SCHEDULE, cron: "* * * * * *" }).ok).toBe(false);
    expect(toBody({ ...NEW_SCHEDULE, mode: "stale", staleAfterHours: "0" }).ok).toBe(false);
    expect(toBody({ ...NEW_SCHEDULE, mode: "stale", staleAfterHours: "" }).ok).toBe(false);
  });

  it("shows times in the schedule's zone, a dash for none", () => {
    expect(whenText(null, "UTC")).toBe("—");
    expect(whenText("2026-03-29T01:30:00Z", "Europe/Berlin")).toContain("03:30");
  });
});
