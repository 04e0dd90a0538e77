/** A group header's bar: its parts are the group's cells as shares of the table's rows. */
import { describe, expect, it } from "vitest";
import { GroupProgress } from "@/contracts/progress";
import { CELL_OUTCOMES, CELL_STATUSES } from "@/domain/statuses";
import { barShares, barTitle } from "@/ui/grid/progress-bar";

const none = {
  groupId: "g",
  queued: 0,
  running: 0,
  paused: 0,
  completed: 0,
  ok: 0,
  notFound: 0,
  skipped: 0,
  conditionNotMet: 0,
  overBudget: 0,
  error: 0,
  cancelled: 0,
  neverRun: 0,
};

describe("the group header's progress bar", () => {
  it("splits the rows into done, in flight, failed and not run, adding up to the whole", () => {
    const g = {
      ...none,
      completed: 5,
      ok: 4,
      skipped: 1,
      running: 2,
      queued: 1,
      error: 1,
      cancelled: 1,
      neverRun: 0,
    };
    const s = barShares(g, 10);
    expect(s).toEqual({ done: 0.5, active: 0.3, failed: 0.1, idle: 0.1 });
    expect(barTitle(g, 10)).toMatch(
      /^5 done · 2 running · 1 queued or paused · 1 failed · 1 stopped · 0 never run/,
    );
  });

  it("is empty for a table with no rows", () => {
    expect(barShares(none, 0)).toEqual({ done: 0, active: 0, failed: 0, idle: 0 });
  });

  it("the body names one field per status and per outcome of the tuples", () => {
    const camel = (o: string) => o.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    expect(Object.keys(GroupProgress.shape).sort()).toEqual(
      ["groupId", "neverRun", ...CELL_STATUSES, ...CELL_OUTCOMES.map(camel)].sort(),
    );
  });
});
