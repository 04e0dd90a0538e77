import { describe, expect, it } from "vitest";
import { abortLocal, registerAttempt } from "@/engine/cancellation";

describe("the cancel registry", () => {
  it("aborts an attempt whose cancel arrived before it was registered", () => {
    // A carrier that claims in its step statement registers after the claim committed;
    // a Stop's notice can land in between.
    expect(abortLocal(["ex_early"])).toBe(0);
    const controller = new AbortController();
    const unregister = registerAttempt("ex_early", controller);
    expect(controller.signal.aborted).toBe(true);
    expect((controller.signal.reason as Error).name).toBe("CancelledError");
    unregister();
  });

  it("remembers an early cancel once: a later attempt of the same id is not aborted", () => {
    abortLocal(["ex_once"]);
    registerAttempt("ex_once", new AbortController())();
    const second = new AbortController();
    registerAttempt("ex_once", second)();
    expect(second.signal.aborted).toBe(false);
  });

  it("aborts a registered attempt and leaves others running", () => {
    const a = new AbortController();
    const b = new AbortController();
    const ua = registerAttempt("ex_a", a);
    const ub = registerAttempt("ex_b", b);
    expect(abortLocal(["ex_a"])).toBe(1);
    expect(a.signal.aborted).toBe(true);
    expect(b.signal.aborted).toBe(false);
    ua();
    ub();
  });
});
