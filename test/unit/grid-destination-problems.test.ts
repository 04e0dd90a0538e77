import { describe, expect, it } from "vitest";
import type { DeliveryView } from "@/contracts/destinations";
import { problemLine, recentProblems } from "@/ui/grid/destination-problems";

const d = (id: string, over: Partial<DeliveryView>): DeliveryView => ({
  id,
  rowId: `row_${id}`,
  status: "failed",
  attempts: 1,
  lastError: "HTTP 404",
  deliveredAt: null,
  nextAttemptAt: null,
  createdAt: "2030-01-01T00:00:00.000Z",
  ...over,
});

describe("a destination's recent problems in the grid", () => {
  it("are its failed deliveries and the pending ones with an error, newest first, at most the limit", () => {
    const failed = [d("a", { createdAt: "2030-01-01T00:00:03.000Z" })];
    const pending = [
      d("b", { status: "pending", lastError: null, createdAt: "2030-01-01T00:00:09.000Z" }),
      d("c", {
        status: "pending",
        lastError: "HTTP 503",
        attempts: 3,
        createdAt: "2030-01-01T00:00:05.000Z",
      }),
      d("e", { status: "pending", lastError: "HTTP 503", createdAt: "2030-01-01T00:00:01.000Z" }),
    ];
    expect(recentProblems(failed, pending).map((p) => p.id)).toEqual(["c", "a", "e"]);
    expect(recentProblems(failed, pending, 2).map((p) => p.id)).toEqual(["c", "a"]);
  });

  it("read as failed with why, or retrying with the tries so far", () => {
    expect(problemLine(d("a", {}))).toBe("failed · HTTP 404");
    expect(problemLine(d("c", { status: "pending", attempts: 3, lastError: "HTTP 503" }))).toBe(
      "retrying (3 tries) · HTTP 503",
    );
  });
});
