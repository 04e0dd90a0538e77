import { describe, expect, it } from "vitest";
import { RequestError } from "@/domain/errors";
import { EnrichmentError, ProviderError } from "@/enrichments/types";
import {
  CancelledError,
  DeadlineError,
  InterruptedError,
  isCancelled,
  isDeadline,
  isInterrupted,
  isLostAuthority,
  isRowBudgetExceeded,
  isSharedLimiterRequired,
  isUsageLimitHalt,
  LostAuthority,
  RowBudgetExceeded,
  SharedLimiterRequired,
  UsageLimitHalt,
} from "@/errors";
import { BlockError } from "@/execution/blocks/types";
import { WorkflowError } from "@/execution/executor";
import { ExpressionError } from "@/execution/expressions";
import { DestinationRefused } from "@/net/outbound";

const cause = new Error("underneath");
const cases: { name: string; make: () => Error; is: (e: unknown) => boolean }[] = [
  { name: "CancelledError", make: () => new CancelledError({ cause }), is: isCancelled },
  { name: "InterruptedError", make: () => new InterruptedError({ cause }), is: isInterrupted },
  { name: "DeadlineError", make: () => new DeadlineError("too long", { cause }), is: isDeadline },
  { name: "LostAuthority", make: () => new LostAuthority("stale", { cause }), is: isLostAuthority },
  { name: "UsageLimitHalt", make: () => new UsageLimitHalt({ cause }), is: isUsageLimitHalt },
  {
    name: "RowBudgetExceeded",
    make: () => new RowBudgetExceeded("website_meta", 1, { cause }),
    is: isRowBudgetExceeded,
  },
  {
    name: "SharedLimiterRequired",
    make: () => new SharedLimiterRequired("set REDIS_URL", { cause }),
    is: isSharedLimiterRequired,
  },
];

describe("one error vocabulary", () => {
  for (const c of cases) {
    it(`${c.name} keeps its cause and name, and only its own predicate knows it`, () => {
      const e = c.make();
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe(c.name);
      expect(e.cause).toBe(cause);
      for (const other of cases) expect(other.is(e)).toBe(other === c);
    });
  }

  it("a plain Error with a vocabulary name is not recognised (no matching by name)", () => {
    for (const c of cases) {
      const impostor = new Error("x");
      impostor.name = c.name;
      expect(c.is(impostor)).toBe(false);
    }
  });

  it("a copy of a class from another bundle is recognised by its brand", () => {
    // What a second bundle's copy looks like: a different class, the same global brand.
    const brand = Symbol.for("cellflow.error-kind");
    const copy = Object.assign(new Error("Stopped by a user"), { [brand]: "cancelled" });
    expect(isCancelled(copy)).toBe(true);
    expect(isInterrupted(copy)).toBe(false);
  });

  it("non-errors are recognised by none", () => {
    for (const c of cases)
      for (const v of [undefined, null, "cancelled", 1]) expect(c.is(v)).toBe(false);
  });

  it("the errors kept local to their modules carry their cause and name too", () => {
    const local: [string, Error][] = [
      ["RequestError", new RequestError("not_found", "x", undefined, { cause })],
      ["ProviderError", new ProviderError("x", true, { cause })],
      [
        "EnrichmentError",
        new EnrichmentError("x", { enrichmentId: "e", costCredits: 0, providers: [] }, false, {
          cause,
        }),
      ],
      ["BlockError", new BlockError("b", "x", { cause })],
      ["WorkflowError", new WorkflowError("b", "x", {}, { cause })],
      ["ExpressionError", new ExpressionError("error", "x", { cause })],
      ["DestinationRefused", new DestinationRefused("h", "x", { cause })],
    ];
    for (const [name, e] of local) {
      expect(e.name).toBe(name);
      expect(e.cause).toBe(cause);
      for (const c of cases) expect(c.is(e)).toBe(false);
    }
    expect("cause" in new BlockError("b", "x")).toBe(false);
  });
});
