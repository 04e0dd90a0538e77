/**
 * The engine model's judge is code too: on made-up histories it must find each kind of
 * broken promise, and find nothing in a history that keeps them.
 */
import { describe, expect, it } from "vitest";
import {
  type AuditRecord,
  checkAttempts,
  checkNothingLost,
  checkRunConditions,
  checkStopHolds,
  checkWindowsAndCompletion,
  type History,
  visibleIn,
} from "../helpers/model-judge";

let id = 0;
function cell(
  at: number,
  rowId: string,
  groupId: string,
  status: string | null,
  executionId: string,
  more: Partial<AuditRecord> = {},
): AuditRecord {
  id += 1;
  return {
    id,
    txn: `t${at}`,
    committed: at,
    kind: "cell",
    op: more.op ?? (status === "queued" && !more.attempt ? "insert" : "update"),
    rowId,
    groupId,
    rowPosition: Number(rowId.slice(1)),
    status,
    executionId,
    attempt: 0,
    dispatchId: null,
    cursor: null,
    window: null,
    stamping: null,
    ...more,
  };
}

function run(at: number, dispatchId: string, more: Partial<AuditRecord> = {}): AuditRecord {
  id += 1;
  return {
    id,
    txn: `t${at}`,
    committed: at,
    kind: "dispatch",
    op: "insert",
    rowId: null,
    groupId: null,
    rowPosition: null,
    status: "active",
    executionId: null,
    attempt: null,
    dispatchId,
    cursor: -1,
    window: 2,
    stamping: true,
    ...more,
  };
}

const base = (records: AuditRecord[], stops: History["stops"] = []): History => ({
  records,
  stops,
  upstream: { ga: ["ga"], gb: ["gb", "ga"], gx: ["gx"] },
  runGroups: { d1: ["ga", "gb"] },
  runKnown: {},
});

describe("I1: a Stop holds", () => {
  const stop = { scope: {}, t0: 100, t1: 110 };

  it("finds an execution of a run older than the Stop queued or running after it", () => {
    const h = base(
      [run(10, "d1"), cell(120, "r1", "ga", "queued", "e1", { dispatchId: "d1" })],
      [stop],
    );
    expect(checkStopHolds(h)).toHaveLength(1);
  });

  it("accepts a run the schedule knew of only after the Stop began", () => {
    const h = base(
      [run(10, "d1"), cell(120, "r1", "ga", "queued", "e1", { dispatchId: "d1" })],
      [stop],
    );
    h.runKnown = { d1: 105 };
    expect(checkStopHolds(h)).toEqual([]);
  });

  it("accepts cells out of a scoped Stop's rows or groups", () => {
    const records = [run(10, "d1"), cell(120, "r1", "ga", "queued", "e1", { dispatchId: "d1" })];
    expect(checkStopHolds(base(records, [{ ...stop, scope: { rowIds: ["r2"] } }]))).toEqual([]);
    expect(checkStopHolds(base(records, [{ ...stop, scope: { groupIds: ["gb"] } }]))).toEqual([]);
    expect(
      checkStopHolds(base(records, [{ ...stop, scope: { rowIds: ["r1"], groupIds: ["ga"] } }])),
    ).toHaveLength(1);
  });

  it("finds an auto-run after a Stop with nothing newer on the row, and accepts one after news", () => {
    const auto = cell(120, "r1", "gb", "queued", "e2");
    expect(checkStopHolds(base([auto], [stop]))).toHaveLength(1);
    const news = [run(101, "d2"), cell(115, "r1", "ga", "queued", "e1", { dispatchId: "d2" })];
    expect(checkStopHolds(base([...news, auto], [stop]))).toEqual([]);
    // A Stop of a group the auto-run does not read from does not hold it.
    expect(checkStopHolds(base([auto], [{ ...stop, scope: { groupIds: ["gx"] } }]))).toEqual([]);
    expect(checkStopHolds(base([auto], [{ ...stop, scope: { groupIds: ["ga"] } }]))).toHaveLength(
      1,
    );
  });

  it("finds an auto-run lifted only by later pages of a run made before the Stop (issue 29, item 2)", () => {
    // ga manual, gb auto-run on it. Run d1 of ga is made (and known) before the Stop of gb
    // and stamps r1 before it; its background page stamps r2 after it, ga completes
    // there and a carrier's auto-run stamps gb: only a request made before the Stop is
    // behind it.
    const stopGb = { scope: { groupIds: ["gb"] }, t0: 100, t1: 110 };
    const records = [
      run(10, "d1"),
      cell(20, "r1", "ga", "queued", "e1", { dispatchId: "d1" }),
      cell(120, "r2", "ga", "queued", "e2", { dispatchId: "d1" }),
      cell(130, "r2", "ga", "running", "e2", { dispatchId: "d1", attempt: 1 }),
      cell(140, "r2", "ga", "completed", "e2", { dispatchId: "d1", attempt: 1 }),
      cell(140, "r2", "gb", "queued", "e3"),
    ];
    const h = base(records, [stopGb]);
    h.runKnown = { d1: 12 };
    expect(checkStopHolds(h)).toEqual([
      "I1: r2/gb queued after a Stop through an auto-run with no run request made after the Stop on the row",
    ]);
    // The judge's rule before issue 29 took any run's stamp on the row after the Stop began
    // for a new request, and this history has one: it passed what the engine did wrong.
    const ruleBefore29 = records.some(
      (r) => r.rowId === "r2" && r.dispatchId && r.status === "queued" && r.committed > 100,
    );
    expect(ruleBefore29).toBe(true);
    // The same history with d1 made after the Stop began is kept.
    h.runKnown = { d1: 105 };
    expect(checkStopHolds(h)).toEqual([]);
  });

  it("accepts an auto-run after a request made after the Stop whose cell was resumed (item 10)", () => {
    const records = [
      run(104, "d2"),
      cell(120, "r1", "gp", "queued", "e1", { dispatchId: "d2" }),
      cell(121, "r1", "gp", "running", "e1", { dispatchId: "d2", attempt: 1 }),
      cell(122, "r1", "gp", "paused", "e1", { dispatchId: "d2", attempt: 1 }),
      // The resume takes the cell out of its run.
      cell(130, "r1", "gp", "queued", "e1", { attempt: 1 }),
      cell(131, "r1", "gp", "running", "e1", { attempt: 2 }),
      cell(132, "r1", "gp", "completed", "e1", { attempt: 2 }),
      cell(132, "r1", "gb", "queued", "e2"),
    ];
    const h = base(records, [stop]);
    h.upstream.gb = ["gb", "gp"];
    h.runKnown = { d2: 105 };
    expect(checkStopHolds(h)).toEqual([]);
  });

  it("ignores what committed before the Stop returned", () => {
    const h = base(
      [run(10, "d1"), cell(105, "r1", "ga", "queued", "e1", { dispatchId: "d1" })],
      [stop],
    );
    expect(checkStopHolds(h)).toEqual([]);
  });
});

describe("I2 and I4: windows and completion", () => {
  it("counts in-flight rows at or before the cursor against the window", () => {
    const records = [
      run(1, "d1"),
      cell(2, "r1", "ga", "queued", "e1", { dispatchId: "d1" }),
      cell(2, "r2", "ga", "queued", "e2", { dispatchId: "d1" }),
      cell(2, "r3", "ga", "queued", "e3", { dispatchId: "d1" }),
      run(3, "d1", { op: "update", cursor: 2 }),
    ];
    expect(checkWindowsAndCompletion(base(records))).toEqual([]);
    records.push(run(4, "d1", { op: "update", cursor: 3 }));
    expect(checkWindowsAndCompletion(base(records))).toEqual([
      "I2: run d1 had 3 rows in flight, window 2",
    ]);
  });

  it("finds a run completed while stamping or with a cell in flight", () => {
    const queued = [run(1, "d1"), cell(2, "r1", "ga", "queued", "e1", { dispatchId: "d1" })];
    const done = run(3, "d1", { op: "update", status: "completed", stamping: false });
    expect(checkWindowsAndCompletion(base([...queued, done]))).toHaveLength(1);
    const stamping = run(3, "d1", { op: "update", status: "completed", stamping: true });
    expect(checkWindowsAndCompletion(base([run(1, "d1"), stamping]))).toHaveLength(1);
    const finished = cell(2, "r1", "ga", "completed", "e1", { dispatchId: "d1", attempt: 1 });
    expect(checkWindowsAndCompletion(base([run(1, "d1"), finished, done]))).toEqual([]);
  });
});

describe("I3: attempts", () => {
  it("finds an execution coming back, an attempt going back, and an attempt ending twice", () => {
    const claim = (at: number, e: string, attempt: number) =>
      cell(at, "r1", "ga", "running", e, { attempt });
    const again = [
      cell(1, "r1", "ga", "queued", "e1"),
      cell(2, "r1", "ga", "queued", "e2", { op: "update" }),
      claim(3, "e1", 1),
    ];
    expect(checkAttempts(base(again))).toEqual(["I3: r1/ga went back to execution e1"]);
    const back = [cell(1, "r1", "ga", "queued", "e1"), claim(2, "e1", 2), claim(3, "e1", 1)];
    expect(checkAttempts(base(back))).toEqual(["I3: r1/ga went back from attempt 2 to 1"]);
    const twice = [
      cell(1, "r1", "ga", "queued", "e1"),
      claim(2, "e1", 1),
      cell(3, "r1", "ga", "completed", "e1", { attempt: 1 }),
      claim(4, "e1", 1),
      cell(5, "r1", "ga", "error", "e1", { attempt: 1 }),
    ];
    expect(checkAttempts(base(twice))).toContain("I3: r1/ga attempt e1#1 ended twice");
    const fine = [
      cell(1, "r1", "ga", "queued", "e1"),
      claim(2, "e1", 1),
      cell(3, "r1", "ga", "queued", "e1", { attempt: 1 }),
      claim(4, "e1", 2),
      cell(5, "r1", "ga", "completed", "e1", { attempt: 2 }),
    ];
    expect(checkAttempts(base(fine))).toEqual([]);
  });
});

describe("I5: nothing lost", () => {
  it("finds cells left in flight and runs left active", () => {
    expect(
      checkNothingLost(
        [
          { rowId: "r1", groupId: "ga", status: "queued" },
          { rowId: "r2", groupId: "ga", status: "paused" },
        ],
        [
          { id: "d1", status: "active" },
          { id: "d2", status: "cancelled" },
        ],
      ),
    ).toEqual(["I5: r1/ga left queued", "I5: run d1 left active"]);
  });
});

describe("run conditions (checkRunConditions)", () => {
  /** Row r1's `a` column set to `value` (null: cleared) at `at`. */
  const rowValue = (at: number, value: unknown): AuditRecord => ({
    ...cell(at, "r1", "", null, ""),
    kind: "row",
    groupId: null,
    executionId: null,
    value,
  });
  const notMet = (at: number) =>
    cell(at, "r1", "gm", "completed", "e1", { attempt: 1, outcome: "condition_not_met" });
  const claim = (at: number) => cell(at, "r1", "gm", "running", "e1", { attempt: 1 });
  const judged = (records: AuditRecord[], runIf = true) =>
    checkRunConditions(records, { groupId: "gm", column: "a", runIf });

  it("keeps a cell that ended condition_not_met on a row whose a was empty at its claim, or since", () => {
    expect(judged([rowValue(1, null), claim(2), notMet(3)])).toEqual([]);
    expect(judged([rowValue(1, "x"), claim(2), rowValue(3, ""), notMet(4)])).toEqual([]);
  });

  it("finds one whose row's a was never empty since its claim, or a group without a condition", () => {
    expect(judged([rowValue(1, "x"), claim(2), notMet(3)])).toEqual([
      expect.stringContaining("never empty since its claim"),
    ]);
    expect(judged([rowValue(1, null), claim(2), notMet(3)], false)).toEqual([
      expect.stringContaining("has no run condition"),
    ]);
    expect(judged([rowValue(1, null), notMet(3)])).toEqual([
      expect.stringContaining("without a claim"),
    ]);
  });

  // Transactions numbered as the server numbers them; a snapshot as pg_current_snapshot prints it.
  const write = (at: number, txn: number, value: unknown) => ({
    ...rowValue(at, value),
    txn: `${txn}`,
  });
  const claimSeeing = (at: number, txn: number, snapshot: string) => ({
    ...claim(at),
    txn: `${txn}`,
    snapshot,
  });

  it("keeps one whose claim did not see yet the write that filled a (still in progress in its snapshot)", () => {
    // 101 cleared a; 105 filled it and took its commit time before the claim's (110), but
    // was still in progress when the claim ran: the judging statement may read 101's value.
    const history = [write(1, 101, null), write(2, 105, "x"), claimSeeing(3, 110, "103:111:105")];
    expect(judged([...history, notMet(4)])).toEqual([]);
    // Not begun yet when the claim's snapshot was taken (at or past its xmax): the same.
    expect(
      judged([write(1, 101, null), write(2, 112, "x"), claimSeeing(3, 110, "103:111:"), notMet(4)]),
    ).toEqual([]);
  });

  it("finds one whose claim saw the write that filled a, and whose writes before it were never empty", () => {
    // 105 ended before the claim's snapshot: the statement after the claim saw "x".
    expect(
      judged([write(1, 101, null), write(2, 105, "x"), claimSeeing(3, 110, "106:111:"), notMet(4)]),
    ).toEqual([expect.stringContaining("never empty since its claim")]);
    // 107 was unseen, but the value before it (105's, seen) was not empty either.
    expect(
      judged([
        write(1, 101, null),
        write(2, 105, "x"),
        write(3, 107, "x"),
        claimSeeing(4, 110, "106:111:107"),
        notMet(5),
      ]),
    ).toEqual([expect.stringContaining("never empty since its claim")]);
  });

  it("reads a snapshot's xmin, xmax and in-progress list (visibleIn)", () => {
    expect(visibleIn("100:110:103,105", "99")).toBe(true);
    expect(visibleIn("100:110:103,105", "104")).toBe(true);
    expect(visibleIn("100:110:103,105", "105")).toBe(false);
    expect(visibleIn("100:110:103,105", "110")).toBe(false);
    expect(visibleIn("100:100:", "100")).toBe(false);
    // Full 64-bit transaction ids, past what a float holds exactly.
    expect(visibleIn("9007199254740993:9007199254740995:", "9007199254740992")).toBe(true);
    expect(visibleIn("9007199254740993:9007199254740995:", "9007199254740994")).toBe(true);
    expect(
      visibleIn("9007199254740993:9007199254740995:9007199254740994", "9007199254740994"),
    ).toBe(false);
  });
});
