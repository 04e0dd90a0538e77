/**
 * The model's money judge is code too: on made-up ledgers and histories it must find
 * each way a charge can be wrong (twice, without a recorded answer, missing for one,
 * for a cached answer, for a row no provider answered, left reserved), and nothing in a
 * history that keeps I6.
 */
import { describe, expect, it } from "vitest";
import { checkCharges, type LedgerEntry, type Money } from "../helpers/model-money";

const charge = (executionId: string, rowId: string, milli = 5000): LedgerEntry => ({
  executionId,
  source: "company_lookup",
  state: "charged",
  milli,
  rowId,
});

/** r0's e1 answered and recorded (charged), r1's e2 not found, r2's e3 cached later. */
function kept(): Money {
  return {
    source: "company_lookup",
    costMilli: 5000,
    ledger: [charge("e1", "r0")],
    ends: [
      { rowId: "r0", executionId: "e1", outcome: "ok", cached: false },
      { rowId: "r1", executionId: "e2", outcome: "not_found", cached: false },
      { rowId: "r0", executionId: "e3", outcome: "ok", cached: true },
    ],
    answers: [
      { rowId: "r0", kind: "found" },
      { rowId: "r1", kind: "not_found" },
      { rowId: "r2", kind: "error" },
    ],
  };
}

describe("the money judge (I6)", () => {
  it("finds nothing in a history that keeps I6", () => {
    expect(checkCharges(kept())).toEqual([]);
  });

  it("finds an answer recorded but not charged", () => {
    const m = { ...kept(), ledger: [] };
    expect(checkCharges(m)).toEqual([
      "I6: execution e1 charged 0 milli for company_lookup, owes 5000 (an answer was recorded)",
    ]);
  });

  it("finds a charge whose answer no winning write recorded (a Stop, a lost fence)", () => {
    const m = { ...kept(), ledger: [charge("e1", "r0"), charge("e4", "r0")] };
    expect(checkCharges(m)).toEqual([
      "I6: execution e4 charged 5000 milli for company_lookup, owes 0 (no answer was recorded)",
    ]);
  });

  it("finds an execution charged more than its cost (charged twice)", () => {
    const m = { ...kept(), ledger: [charge("e1", "r0"), charge("e1", "r0")] };
    expect(checkCharges(m)).toEqual([
      "I6: execution e1 charged 10000 milli for company_lookup, owes 5000 (an answer was recorded)",
    ]);
  });

  it("finds a cached answer charged", () => {
    const m = { ...kept(), ledger: [charge("e1", "r0"), charge("e3", "r0")] };
    expect(checkCharges(m)).toEqual([
      "I6: execution e3 charged 5000 milli for company_lookup, owes 0 (no answer was recorded)",
    ]);
  });

  it("finds a charge for a row the provider never answered with a result", () => {
    const m: Money = {
      ...kept(),
      ledger: [charge("e1", "r0"), charge("e2", "r1")],
      ends: [...kept().ends, { rowId: "r1", executionId: "e2", outcome: "ok", cached: false }],
    };
    expect(checkCharges(m)).toEqual([
      "I6: execution e2 charged for row r1, which no provider answered",
    ]);
  });

  it("finds a reservation left once nothing runs", () => {
    const m = {
      ...kept(),
      ledger: [charge("e1", "r0"), { ...charge("e5", "r1"), state: "reserved" as const }],
    };
    expect(checkCharges(m)).toEqual(["I6: e5 company_lookup left reserved (5000 milli)"]);
  });

  it("ignores other sources' entries when it weighs the paid group", () => {
    const other = { ...charge("x1", "r0"), source: "website_meta@meta" };
    expect(checkCharges({ ...kept(), ledger: [charge("e1", "r0"), other] })).toEqual([]);
  });
});

describe("the money judge on a paid block (I6)", () => {
  const block = (executionId: string, rowId: string): LedgerEntry => ({
    ...charge(executionId, rowId),
    source: "company_lookup@look",
  });
  /** b1 recorded an answer; b2 resumed b1 (its copy); b3 stopped before its checkpoint. */
  const withBlock = (ledger: LedgerEntry[]): Money => ({
    ...kept(),
    ledger: [charge("e1", "r0"), ...ledger],
    block: {
      source: "company_lookup@look",
      records: [
        { executionId: "b1", resumes: [], answered: true },
        { executionId: "b2", resumes: ["b1"], answered: true },
        { executionId: "b3", resumes: [], answered: false },
      ],
    },
  });

  it("charges the execution that recorded the answer, not the one a resume copied it to", () => {
    expect(checkCharges(withBlock([block("b1", "r0")]))).toEqual([]);
  });

  it("finds a checkpoint recorded but not charged (a checkpoint that landed after a Stop)", () => {
    expect(checkCharges(withBlock([]))).toEqual([
      "I6: execution b1 charged 0 milli for company_lookup@look, owes 5000 (an answer was recorded)",
    ]);
  });

  it("finds the resumed copy charged again, and a charge with no checkpoint", () => {
    expect(
      checkCharges(withBlock([block("b1", "r0"), block("b2", "r0"), block("b3", "r0")])),
    ).toEqual([
      "I6: execution b2 charged 5000 milli for company_lookup@look, owes 0 (no answer was recorded)",
      "I6: execution b3 charged 5000 milli for company_lookup@look, owes 0 (no answer was recorded)",
    ]);
  });
});

describe("the money judge on the counters the caps read (I6)", () => {
  const counters = {
    reservedMilli: 0,
    usedMilli: 15_000,
    ledgerUsedMilli: 15_000,
    runs: [{ id: "run_a", committedMilli: 5000, chargedMilli: 5000 }],
  };

  it("finds nothing when they agree with the ledger", () => {
    expect(checkCharges({ ...kept(), counters })).toEqual([]);
  });

  it("finds credits left reserved, a month counter and a run counter that drifted", () => {
    const drifted = {
      reservedMilli: 5000,
      usedMilli: 10_000,
      ledgerUsedMilli: 15_000,
      runs: [{ id: "run_a", committedMilli: -5000, chargedMilli: 0 }],
    };
    expect(checkCharges({ ...kept(), counters: drifted })).toEqual([
      "I6: the workspace holds 5000 milli reserved at rest",
      "I6: the workspace counts 10000 milli used, its ledger 15000",
      "I6: run run_a counts -5000 milli against its cap, its ledger 0",
    ]);
  });

  it("finds a row charged past its run's per-row budget, and nothing in a row within it", () => {
    const rowBudgets = [
      {
        id: "run_b",
        maxMilli: 5000,
        rows: [
          { rowId: "r0", chargedMilli: 5000 },
          { rowId: "r1", chargedMilli: 10_000 },
        ],
      },
    ];
    expect(checkCharges({ ...kept(), counters: { ...counters, rowBudgets } })).toEqual([
      "I6: row r1 charged 10000 milli in run run_b, past its budget of 5000",
    ]);
  });
});
