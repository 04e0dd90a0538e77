import { describe, expect, it } from "vitest";
import {
  judgeDestination,
  type OutboxEntry,
  type ReceivedCall,
} from "../../chaos/destination-judge";

const call = (
  id: string,
  rowId: string,
  bodyHash: string,
  over: Partial<ReceivedCall> = {},
): ReceivedCall => ({
  id,
  rowId,
  bodyHash,
  accepted: true,
  dropped: false,
  signed: true,
  activeCells: 0,
  ...over,
});

const entry = (id: string, rowId: string, seq = 1, status = "delivered"): OutboxEntry => ({
  id,
  rowId,
  seq,
  status,
});

describe("the chaos judge of destinations", () => {
  it("counts a row delivered when any call of it was accepted, re-sends with one body as fine, and tells dropped from cut calls", () => {
    const v = judgeDestination(
      ["r1", "r2"],
      [
        call("d1", "r1", "h1", { accepted: false, dropped: true }),
        call("d1", "r1", "h1"),
        call("d2", "r2", "h2", { accepted: false }),
        call("d2", "r2", "h2"),
      ],
      [entry("d1", "r1"), entry("d2", "r2")],
    );
    expect(v).toMatchObject({
      rows: 2,
      calls: 4,
      accepted: 2,
      dropped: 1,
      cut: 1,
      ids: 2,
      resentIds: 2,
      undelivered: 0,
      deliveries: 2,
      deliveriesNotAccepted: 0,
      deliveriesFailed: 0,
      rowsSentUnfinished: 0,
      idsWithTwoBodies: 0,
      badSignatures: 0,
      problems: [],
    });
  });

  it("reports a finished row never accepted, even when it was sent and dropped", () => {
    const v = judgeDestination(
      ["r1", "r2", "r3"],
      [call("d1", "r1", "h1"), call("d2", "r2", "h2", { accepted: false, dropped: true })],
      [entry("d1", "r1")],
    );
    expect(v.undelivered).toBe(2);
    expect(v.undeliveredSample).toEqual(["r2", "r3"]);
    expect(v.problems).toEqual(["2 finished rows never delivered (r2, r3)"]);
  });

  it("reports outbox entries not delivered, delivered but never accepted, and failed", () => {
    const v = judgeDestination(
      ["r1", "r2", "r3"],
      [call("d1", "r1", "h1"), call("d2", "r2", "h2"), call("d3", "r3", "h3")],
      [
        entry("d1", "r1"),
        entry("d2", "r2", 1, "pending"),
        entry("d3", "r3", 1, "failed"),
        entry("d4", "r3", 2),
      ],
    );
    expect(v.deliveries).toBe(4);
    expect(v.deliveriesNotAccepted).toBe(3);
    expect(v.deliveriesFailed).toBe(1);
    expect(v.problems).toEqual([
      "3 deliveries not delivered or never accepted",
      "1 deliveries failed",
    ]);
  });

  it("judges a row by its latest accepted body: an earlier partial one is fine, a partial last one is not", () => {
    const v = judgeDestination(
      ["r1", "r2"],
      [
        call("d1", "r1", "h1", { activeCells: 1 }),
        call("d2", "r1", "h2"),
        call("d4", "r2", "h4", { activeCells: 1 }),
        call("d3", "r2", "h3"),
      ],
      [entry("d1", "r1", 1), entry("d2", "r1", 2), entry("d3", "r2", 1), entry("d4", "r2", 2)],
    );
    expect(v.rowsSentUnfinished).toBe(1);
    expect(v.rowsSentUnfinishedSample).toEqual(["r2"]);
    expect(v.problems).toEqual(["1 rows whose latest accepted body has an active cell"]);
  });

  it("reports a delivery id sent with two different bodies, and bad signatures", () => {
    const v = judgeDestination(
      ["r1"],
      [
        call("d1", "r1", "h1", { accepted: false }),
        call("d1", "r1", "h9"),
        call("d3", "r1", "h3", { signed: false }),
      ],
      [entry("d1", "r1", 1), entry("d3", "r1", 2)],
    );
    expect(v.idsWithTwoBodies).toBe(1);
    expect(v.idsWithTwoBodiesSample).toEqual(["d1"]);
    expect(v.badSignatures).toBe(1);
    expect(v.problems).toEqual([
      "1 delivery ids sent with two different bodies",
      "1 deliveries with a bad signature",
    ]);
  });
});
