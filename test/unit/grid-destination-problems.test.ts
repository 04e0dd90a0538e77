import { describe, expect, it } from "vitest";
import type { DeliveryView } from "@/contracts/destinations";
import { problemLine } from "@/ui/grid/destination-problems";

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
  it("read as failed with why, or retrying with the tries so far", () => {
    expect(problemLine(d("a", {}))).toBe("failed · HTTP 404");
    expect(problemLine(d("c", { status: "pending", attempts: 3, lastError: "HTTP 503" }))).toBe(
      "retrying (3 tries) · HTTP 503",
    );
  });
});
