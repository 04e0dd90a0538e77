import { describe, expect, it } from "vitest";
import {
  CancelledError,
  DeadlineError,
  InterruptedError,
  isCancelled,
  isDeadline,
  isInterrupted,
  isLostAuthority,
  isRateLimitExceeded,
  isSharedLimiterRequired,
  isUsageLimitHalt,
  LostAuthority,
  RateLimitExceeded,
  SharedLimiterRequired,
  UsageLimitHalt,
} from "../../src/errors";

const cause = new Error("underneath");
const cases: { name: string; make: () => Error; is: (e: unknown) => boolean }[] = [
  { name: "CancelledError", make: () => new CancelledError({ cause }), is: isCancelled },
  { name: "InterruptedError", make: () => new InterruptedError({ cause }), is: isInterrupted },
  { name: "DeadlineError", make: () => new DeadlineError("too long", { cause }), is: isDeadline },
  { name: "LostAuthority", make: () => new LostAuthority("stale", { cause }), is: isLostAuthority },
  { name: "UsageLimitHalt", make: () => new UsageLimitHalt({ cause }), is: isUsageLimitHalt },
  {
    name: "RateLimitExceeded",
    make: () => new RateLimitExceeded("k", "limited", { cause }),
    is: isRateLimitExceeded,
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
});
