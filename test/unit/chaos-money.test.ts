/**
 * The chaos run's money judge (chaos/money.ts, invariant I6), on hand-built runs: a clean
 * run passes every check, and each way money can go wrong breaks exactly its own check.
 */
import { describe, expect, it } from "vitest";
import { judgeMoney, moneyLine, moneyProblems } from "../../chaos/money";
import type {
  LedgerEntry,
  MoneyCell,
  MoneyInput,
  PaidGroup,
  ProviderAnswer,
} from "../../chaos/money-input";

const PAID: PaidGroup[] = [
  { groupId: "co", source: "company_lookup", milli: 5_000 },
  { groupId: "cw", source: "company_lookup@lookup", milli: 5_000, blockId: "lookup" },
];

const kinds: Record<string, ProviderAnswer["kind"]> = {
  "found.example": "found",
  "none.example": "not_found",
  "down.example": "error",
  "cached.example": "found",
  "block.example": "found",
  "redriven.example": "found",
};

function cell(rowId: string, groupId: string, input: string, over: Partial<MoneyCell> = {}) {
  const kind = kinds[input];
  const completed = kind !== "error";
  return {
    rowId,
    groupId,
    executionId: `ex_${rowId}`,
    status: completed ? "completed" : "error",
    outcome: completed ? (kind === "found" ? "ok" : "not_found") : null,
    attempt: 1,
    error: completed ? null : "The provider failed — provider_1: HTTP 500",
    input,
    recorded: completed
      ? groupId === "co"
        ? { found: kind === "found", cached: false, costCredits: kind === "found" ? 5 : 0 }
        : { found: kind === "found", cached: null, costCredits: null }
      : null,
    claims: 1,
    ...over,
  } satisfies MoneyCell;
}

function charge(c: MoneyCell, chargedAt: number, over: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    executionId: c.executionId,
    source: c.groupId === "co" ? "company_lookup" : "company_lookup@lookup",
    milli: 5_000,
    state: "charged",
    rowId: c.rowId,
    groupId: c.groupId,
    cellExecutionId: c.executionId,
    attempt: c.attempt,
    chargedAt,
    ...over,
  };
}

/**
 * A clean run: r1 found and charged; r2 found nothing; r3's provider failed; r4 answered
 * from the cache (its domain was asked earlier) and was not charged; r5's block found and
 * was charged by its checkpoint; r6's block was re-driven and recorded an answer an
 * earlier attempt got (from the cache): not charged, and not a break.
 */
function cleanRun(): MoneyInput & {
  cells: MoneyCell[];
  ledger: LedgerEntry[];
  answers: ProviderAnswer[];
} {
  const r1 = cell("r1", "co", "found.example");
  const r4 = cell("r4", "co", "cached.example", {
    recorded: { found: true, cached: true, costCredits: 0 },
  });
  const r5 = cell("r5", "cw", "block.example");
  const r6 = cell("r6", "cw", "redriven.example", { claims: 2, attempt: 2 });
  const cells = [
    r1,
    cell("r2", "co", "none.example"),
    cell("r3", "co", "down.example"),
    r4,
    r5,
    r6,
  ];
  const answers: ProviderAnswer[] = [
    { input: "found.example", kind: "found", at: 1_000 },
    { input: "none.example", kind: "not_found", at: 1_010 },
    { input: "down.example", kind: "error", at: 1_020 },
    { input: "cached.example", kind: "found", at: 500 },
    { input: "block.example", kind: "found", at: 1_030 },
    { input: "redriven.example", kind: "found", at: 900 },
  ];
  return {
    paid: PAID,
    cells,
    ledger: [charge(r1, 1_100), charge(r5, 1_130)],
    answers,
    counters: { usedMilli: 10_000, reservedMilli: 0 },
    expected: (input) => kinds[input] ?? "not_found",
  };
}

describe("judgeMoney", () => {
  it("a clean run: every figure 0, two charges for five found answers, one cache hit", () => {
    const r = judgeMoney(cleanRun());
    expect(r).toMatchObject({
      charges: 2,
      credits: 10,
      answers: { found: 4, notFound: 1, error: 1 },
      duplicateCharges: 0,
      chargesWithoutAnswer: 0,
      answersNotCharged: 0,
      uncertainCacheHits: 1,
      cacheHits: 1,
      cachedCharged: 0,
      wrongAmounts: 0,
      detailsMismatches: 0,
      reservedLeft: 0,
      counters: { usedMilli: 10_000, chargedMilli: 10_000, reservedMilli: 0, ok: true },
      rateLimitFailures: 0,
      wrongOutcomes: 0,
      unexpectedErrors: 0,
      stopped: 0,
      stoppedCharged: 0,
    });
    // The one finding is r6, reported (with its evidence) but no break.
    expect(r.sample).toEqual([
      {
        rowId: "r6",
        groupId: "cw",
        executionId: "ex_r6",
        why: "not charged, claimed 2 times: maybe a cache hit",
      },
    ]);
    expect(moneyProblems(r)).toEqual([]);
    expect(moneyLine(r)).toContain("duplicates 0, without an answer 0, answers not charged 0");
  });

  it("a row charged under a second execution is a duplicate charge (and one without an answer)", () => {
    const run = cleanRun();
    const r1 = run.cells[0] as MoneyCell;
    run.answers.push({ input: "found.example", kind: "found", at: 2_000 });
    run.ledger.push(charge({ ...r1, executionId: "ex_r1_again" }, 2_100));
    run.counters.usedMilli += 5_000;
    const r = judgeMoney(run);
    expect(r.duplicateCharges).toBe(1);
    // The cell holds the first execution: the second charge stands on nothing it recorded.
    expect(r.chargesWithoutAnswer).toBe(1);
    expect(moneyProblems(r)).toContain("1 duplicate charges");
  });

  it("a charge with no found answer from the provider is a charge without an answer", () => {
    const run = cleanRun();
    run.answers = run.answers.filter((a) => a.input !== "found.example");
    const r = judgeMoney(run);
    expect(r.chargesWithoutAnswer).toBe(1);
    expect(r.sample[0]?.why).toMatch(/no found answer/);
  });

  it("a provider answer logged after the charge (beyond the slack) does not pay for it", () => {
    const run = cleanRun();
    const a = run.answers.find((x) => x.input === "found.example");
    if (a) a.at = 1_200;
    expect(judgeMoney(run).chargesWithoutAnswer).toBe(1);
    expect(judgeMoney({ ...run, slackMs: 200 }).chargesWithoutAnswer).toBe(0);
  });

  it("one answer cannot pay for two charges: two rows of one domain, one answer", () => {
    const run = cleanRun();
    const twin = cell("r7", "co", "found.example");
    run.cells.push(twin);
    run.ledger.push(charge(twin, 1_150));
    run.counters.usedMilli += 5_000;
    const r = judgeMoney(run);
    expect(r.chargesWithoutAnswer).toBe(1);
    expect(r.duplicateCharges).toBe(0);
  });

  it("a charge whose cell's terminal write was another attempt's (its own lost) has no answer", () => {
    const run = cleanRun();
    run.cells[0] = { ...(run.cells[0] as MoneyCell), attempt: 2 };
    const r = judgeMoney(run);
    expect(r.chargesWithoutAnswer).toBe(1);
    expect(r.sample[0]?.why).toMatch(/attempt 1 was charged, attempt 2 recorded/);
  });

  it("a charge whose cell ended in error or was stopped has no answer", () => {
    const run = cleanRun();
    run.cells[0] = {
      ...(run.cells[0] as MoneyCell),
      status: "cancelled",
      outcome: null,
      recorded: null,
    };
    expect(judgeMoney(run).chargesWithoutAnswer).toBe(1);
  });

  it("a Stop after a block's checkpoint leaves its charge standing; before it, nothing is charged", () => {
    const run = cleanRun();
    // r5's checkpoint recorded its answer (charged), then the Stop came.
    run.cells[4] = { ...(run.cells[4] as MoneyCell), status: "cancelled", outcome: null };
    // r2 was stopped mid-call: nothing recorded, nothing charged.
    run.cells[1] = { ...(run.cells[1] as MoneyCell), status: "cancelled", recorded: null };
    const r = judgeMoney(run);
    expect(r).toMatchObject({ stopped: 2, stoppedCharged: 1, chargesWithoutAnswer: 0 });
    expect(moneyProblems(r)).toEqual([]);
    expect(moneyLine(r)).toContain("2 paid cells stopped, 1 of them charged");
  });

  it("a block charged without a checkpoint holding a found answer has no answer", () => {
    const run = cleanRun();
    run.cells[4] = { ...(run.cells[4] as MoneyCell), recorded: null };
    expect(judgeMoney(run).chargesWithoutAnswer).toBe(1);
  });

  it("a cached answer charged is counted (and stands on no answer of its own)", () => {
    const run = cleanRun();
    const r4 = run.cells[3] as MoneyCell;
    run.ledger.push(charge(r4, 1_200));
    run.counters.usedMilli += 5_000;
    const r = judgeMoney(run);
    expect(r.cachedCharged).toBe(1);
    expect(r.chargesWithoutAnswer).toBe(1);
    expect(r.detailsMismatches).toBe(1);
    expect(moneyProblems(r)).toContain("1 cached answers charged");
  });

  it("a recorded provider answer with no charge is an answer not charged", () => {
    const run = cleanRun();
    run.ledger = run.ledger.filter((e) => e.rowId !== "r1");
    run.counters.usedMilli = 5_000;
    const r = judgeMoney(run);
    expect(r.answersNotCharged).toBe(1);
    // Its details say 5 credits; nothing was charged.
    expect(r.detailsMismatches).toBe(1);
  });

  it("a block's answer not charged breaks when the cell ran once, is reported when it was re-driven", () => {
    const run = cleanRun();
    run.ledger = run.ledger.filter((e) => e.rowId !== "r5");
    run.counters.usedMilli = 5_000;
    expect(judgeMoney(run).answersNotCharged).toBe(1);
    run.cells[4] = { ...(run.cells[4] as MoneyCell), claims: 2 };
    const r = judgeMoney(run);
    expect(r.answersNotCharged).toBe(0);
    expect(r.uncertainCacheHits).toBe(2);
    // No cache hit without an answer the provider gave: then it came from nowhere.
    run.answers = run.answers.filter((a) => a.input !== "block.example");
    expect(judgeMoney(run)).toMatchObject({ answersNotCharged: 1, uncertainCacheHits: 1 });
  });

  it("a reservation left at rest is counted, and the counters must show none", () => {
    const run = cleanRun();
    const r2 = run.cells[1] as MoneyCell;
    run.ledger.push(charge(r2, 0, { state: "reserved", chargedAt: null }));
    let r = judgeMoney(run);
    expect(r.reservedLeft).toBe(1);
    expect(r.chargesWithoutAnswer).toBe(0);
    run.counters.reservedMilli = 5_000;
    r = judgeMoney(run);
    expect(r.counters.ok).toBe(false);
    expect(moneyProblems(r)).toEqual([
      "1 reservations left at rest",
      "workspace counters off: used 10000 milli for 10000 charged, reserved 5000",
    ]);
  });

  it("used credits that are not the ledger's charged sum break the counters", () => {
    const run = cleanRun();
    run.counters.usedMilli = 15_000;
    expect(judgeMoney(run).counters).toEqual({
      usedMilli: 15_000,
      chargedMilli: 10_000,
      reservedMilli: 0,
      ok: false,
    });
  });

  it("a charge of the wrong amount is counted", () => {
    const run = cleanRun();
    const first = run.ledger[0] as LedgerEntry;
    run.ledger[0] = { ...first, milli: 1_000 };
    run.counters.usedMilli = 6_000;
    const r = judgeMoney(run);
    expect(r.wrongAmounts).toBe(1);
    expect(r.detailsMismatches).toBe(1);
  });

  it("a cell that failed for the rate limit is counted", () => {
    const run = cleanRun();
    run.cells[2] = {
      ...(run.cells[2] as MoneyCell),
      error: "Rate limit exceeded — retry later",
    };
    const r = judgeMoney(run);
    expect(r.rateLimitFailures).toBe(1);
    expect(moneyProblems(r)).toEqual(["1 cells failed for the rate limit"]);
  });

  it("a paid cell completed with an outcome its provider did not answer is counted; an unexpected error is reported", () => {
    const run = cleanRun();
    run.cells[1] = { ...(run.cells[1] as MoneyCell), input: "found.example" };
    const lost = "The worker running this cell was lost 3 times; run it again";
    run.cells.push(
      cell("r8", "co", "none.example", { status: "error", outcome: null, error: lost }),
    );
    const r = judgeMoney(run);
    expect(r.wrongOutcomes).toBe(1);
    expect(r.unexpectedErrors).toBe(1);
    expect(r.sample.map((f) => f.why)).toContain(`ended error: ${lost}`);
    // An error is reported, not a break: a fault may end a call.
    expect(moneyProblems(r)).toEqual([
      "1 paid cells completed with an outcome their provider did not answer",
    ]);
  });

  it("entries of sources the run does not pay for count in the counters only", () => {
    const run = cleanRun();
    run.ledger.push({
      ...(run.ledger[0] as LedgerEntry),
      executionId: "ex_other",
      source: "website_meta",
      milli: 1_000,
    });
    run.counters.usedMilli = 11_000;
    const r = judgeMoney(run);
    expect(r.charges).toBe(2);
    expect(r.counters.ok).toBe(true);
    expect(moneyProblems(r)).toEqual([]);
  });
});
