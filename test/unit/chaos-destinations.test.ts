import { describe, expect, it } from "vitest";
import { judgeDestination, type ReceivedCall } from "../../chaos/destination-judge";

const call = (
  id: string,
  rowId: string,
  bodyHash: string,
  accepted = true,
  signed = true,
): ReceivedCall => ({
  id,
  rowId,
  bodyHash,
  accepted,
  signed,
});

describe("the chaos judge of destinations", () => {
  it("counts a row delivered when any call of it was accepted, and re-sends with one body as fine", () => {
    const v = judgeDestination(
      ["r1", "r2"],
      [
        call("d1", "r1", "h1", false),
        call("d1", "r1", "h1"),
        call("d2", "r2", "h2"),
        call("d2", "r2", "h2"),
      ],
    );
    expect(v).toMatchObject({
      rows: 2,
      calls: 4,
      accepted: 3,
      refused: 1,
      ids: 2,
      resentIds: 2,
      undelivered: 0,
      idsWithTwoBodies: 0,
      badSignatures: 0,
      problems: [],
    });
  });

  it("reports a finished row never accepted, even when it was sent and dropped", () => {
    const v = judgeDestination(
      ["r1", "r2", "r3"],
      [call("d1", "r1", "h1"), call("d2", "r2", "h2", false)],
    );
    expect(v.undelivered).toBe(2);
    expect(v.undeliveredSample).toEqual(["r2", "r3"]);
    expect(v.problems).toEqual(["2 finished rows never delivered (r2, r3)"]);
  });

  it("reports a delivery id sent with two different bodies, and bad signatures", () => {
    const v = judgeDestination(
      ["r1"],
      [call("d1", "r1", "h1", false), call("d1", "r1", "h9"), call("d3", "r1", "h3", true, false)],
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
