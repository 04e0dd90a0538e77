/** The chaos run's time-to-heal arithmetic, on a made-up audit. */
import { describe, expect, it } from "vitest";
import type { Transition } from "../../chaos/audit";
import { orphansOf } from "../../chaos/chain-run";

let id = 0;
const t = (at: number, rowId: string, oldStatus: string, newStatus: string): Transition => {
  id += 1;
  return {
    id,
    at,
    op: "update",
    rowId,
    groupId: "g",
    oldStatus,
    newStatus,
    oldExec: "e",
    newExec: "e",
    attempt: 1,
  };
};

describe("orphansOf", () => {
  it("counts cells running at the fault and handed back, found when handed back, healed when run again", () => {
    const transitions = [
      t(50, "r1", "queued", "running"),
      t(60, "r2", "queued", "running"),
      t(70, "r3", "queued", "running"),
      // r1 and r2 lost their worker at 100; r3 finished normally.
      t(1_200, "r1", "running", "queued"),
      t(1_900, "r2", "running", "queued"),
      t(150, "r3", "running", "completed"),
      t(2_500, "r1", "queued", "running"),
      t(4_100, "r2", "queued", "running"),
    ].sort((a, b) => a.at - b.at);
    expect(orphansOf(transitions, 100, Number.POSITIVE_INFINITY)).toEqual({
      orphans: 2,
      orphansRequeuedMs: 1_800,
      orphansRerunMs: 4_000,
    });
  });

  it("leaves out hand-backs after the next fault, and reports none when nothing was orphaned", () => {
    const transitions = [t(50, "r1", "queued", "running"), t(900, "r1", "running", "queued")];
    expect(orphansOf(transitions, 100, 500)).toEqual({
      orphans: 0,
      orphansRequeuedMs: null,
      orphansRerunMs: null,
    });
  });
});
