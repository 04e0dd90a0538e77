/**
 * What the grid accepts as a credit amount (a run's or the table's per-row budget): what
 * the API accepts — a number above 0 with at most three decimals — or empty for none.
 */
import { describe, expect, it } from "vitest";
import { CreditAmount } from "@/contracts/common";
import { readCreditInput } from "@/ui/grid/credit-input";

describe("readCreditInput", () => {
  it("empty is no budget", () => {
    expect(readCreditInput("")).toEqual({ ok: true, value: null });
    expect(readCreditInput("  ")).toEqual({ ok: true, value: null });
  });

  it("a number above 0 with up to three decimals is the budget", () => {
    expect(readCreditInput("2")).toEqual({ ok: true, value: 2 });
    expect(readCreditInput(" 1.5 ")).toEqual({ ok: true, value: 1.5 });
    expect(readCreditInput("0.125")).toEqual({ ok: true, value: 0.125 });
  });

  it("zero, negatives, more decimals and words are refused", () => {
    for (const text of ["0", "0.000", "-1", "1.0005", "abc", "1e3", "1,5"])
      expect(readCreditInput(text)).toEqual({ ok: false });
  });

  it("accepts exactly what the API's CreditAmount accepts", () => {
    for (const text of ["1", "0.001", "2.5", "1000000000", "0", "1.0005", "1000000001"]) {
      const read = readCreditInput(text);
      expect(read.ok).toBe(CreditAmount.safeParse(Number(text)).success);
    }
  });
});
