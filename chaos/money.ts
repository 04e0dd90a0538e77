/**
 * The money judge (issue 29, invariant I6): per execution, the credits charged equal the
 * cost times the provider answers whose recording write won its fence — exactly once,
 * whatever the kills, re-drives and resumes; a cache hit is never charged. A pure
 * function of what the run left: the provider's log of the answers it sent, the ledger
 * (`usage`, every state), the paid cells and what they recorded, the workspace's
 * counters. `ledger-read.ts` reads them; the unit test builds them by hand.
 *
 * - **Duplicate charges**: a cell's group is stamped once per run, so a (row, group)
 *   charged more than once (under one key — the unique index forbids it — or under two
 *   executions) is a duplicate.
 * - **Charges without an answer**: a charged entry must stand on a recorded answer of
 *   that very execution — a group's terminal write by the attempt that reserved it
 *   (completed, outcome `ok`, not cached), a block's checkpoint holding a found answer —
 *   and on a `found` answer the provider sent for the row's input before the charge
 *   (each answer pays for one charge at most).
 * - **Answers not charged**: a recorded provider answer (found, not cached) with no
 *   charge for its execution. A block's checkpoint does not say whether its answer came
 *   from the cache: one recorded by a cell claimed more than once, whose input the
 *   provider did answer, may be a cache hit of an answer an earlier attempt got and could
 *   not record (reported, not a break); a cell claimed once, with an input no other cell
 *   asks, can only have asked itself.
 * - **Cached cells charged**, **reservations left** at rest, **counters** (the
 *   workspace's `used_milli` is the sum of its charged entries, `reserved_milli` 0), a
 *   group cell's `details.costCredits` equal to what its key was charged, the amount of
 *   each charge, and **cells failed for the rate limit** (a limiter that runs dry must
 *   make calls wait, not fail).
 */
import type { LedgerEntry, MoneyCell, MoneyInput, PaidGroup, ProviderAnswer } from "./money-input";

export interface MoneyFinding {
  rowId: string | null;
  groupId: string | null;
  executionId: string | null;
  why: string;
}

export interface MoneyReport {
  /** Charged entries of the paid groups, and their credits. */
  charges: number;
  credits: number;
  answers: { found: number; notFound: number; error: number };
  duplicateCharges: number;
  chargesWithoutAnswer: number;
  answersNotCharged: number;
  /** Block answers not charged by a cell claimed more than once: maybe a cache hit. */
  uncertainCacheHits: number;
  cacheHits: number;
  cachedCharged: number;
  wrongAmounts: number;
  /** Group cells whose `details.costCredits` is not what their key was charged. */
  detailsMismatches: number;
  reservedLeft: number;
  counters: { usedMilli: number; chargedMilli: number; reservedMilli: number; ok: boolean };
  rateLimitFailures: number;
  /** Completed cells whose outcome is not what the provider answers for their input. */
  wrongOutcomes: number;
  /** Cells that ended `error` on an input the provider answers (found or not found). */
  unexpectedErrors: number;
  /** Paid cells a Stop ended, and those of them charged (a block's checkpoint came first). */
  stopped: number;
  stoppedCharged: number;
  sample: MoneyFinding[];
}

const RATE_LIMIT = /rate.?limit/i;
const SAMPLE = 20;

const cellKey = (rowId: string | null, groupId: string | null) => `${rowId}/${groupId}`;
const chargeKey = (executionId: string, source: string) => `${executionId}\u0000${source}`;

/** Matches each charge to an unused `found` answer of its input sent before it; the unmatched. */
function unmatchedCharges(
  charges: { entry: LedgerEntry; input: string | null }[],
  answers: readonly ProviderAnswer[],
  slackMs: number,
): Set<LedgerEntry> {
  const found = new Map<string, number[]>();
  for (const a of answers) {
    if (a.kind !== "found") continue;
    const list = found.get(a.input);
    if (list) list.push(a.at);
    else found.set(a.input, [a.at]);
  }
  for (const list of found.values()) list.sort((x, y) => x - y);
  const used = new Map<string, number>();
  const out = new Set<LedgerEntry>();
  // Charges in time order, each taking the earliest unused answer: any answer before an
  // earlier charge is before a later one too, so this finds a match whenever one exists.
  const ordered = [...charges].sort((x, y) => (x.entry.chargedAt ?? 0) - (y.entry.chargedAt ?? 0));
  for (const { entry, input } of ordered) {
    const list = input === null ? undefined : found.get(input);
    const next = input === null ? 0 : (used.get(input) ?? 0);
    const at = list?.[next];
    if (input === null || at === undefined || at > (entry.chargedAt ?? 0) + slackMs) {
      out.add(entry);
      continue;
    }
    used.set(input, next + 1);
  }
  return out;
}

/** What the checks share: the input, its paid groups and cells, the charged entries. */
interface Judging {
  m: MoneyInput;
  paidBy: Map<string, PaidGroup>;
  cells: Map<string, MoneyCell>;
  charged: LedgerEntry[];
  /** Charged entries by execution and source. */
  chargedKeys: Map<string, LedgerEntry[]>;
  /** Keeps a finding for the sample (the first SAMPLE, in the order the checks find them). */
  note: (f: MoneyFinding) => void;
}

/** What the pass over the paid cells counts. */
interface CellCounts {
  answersNotCharged: number;
  uncertainCacheHits: number;
  cacheHits: number;
  cachedCharged: number;
  detailsMismatches: number;
  rateLimitFailures: number;
  wrongOutcomes: number;
  unexpectedErrors: number;
  stopped: number;
  stoppedCharged: number;
}

export function judgeMoney(m: MoneyInput): MoneyReport {
  const paidBy = new Map(m.paid.map((p) => [p.groupId, p]));
  const sources = new Set(m.paid.map((p) => p.source));
  const cells = new Map(m.cells.map((c) => [cellKey(c.rowId, c.groupId), c]));
  const sample: MoneyFinding[] = [];
  const note = (f: MoneyFinding) => {
    if (sample.length < SAMPLE) sample.push(f);
  };
  const charged = m.ledger.filter((e) => e.state === "charged" && sources.has(e.source));
  const { chargedKeys, perCell } = chargesByKey(charged);
  const j: Judging = { m, paidBy, cells, charged, chargedKeys, note };

  const duplicateCharges = countDuplicates(perCell, note);
  const { wrongAmounts, chargesWithoutAnswer } = checkCharges(j);
  const counts = checkPaidCells(j);

  const reserved = m.ledger.filter((e) => e.state === "reserved");
  for (const e of reserved) note({ ...ids(e), why: "still reserved at rest" });
  const chargedMilli = m.ledger
    .filter((e) => e.state === "charged")
    .reduce((s, e) => s + e.milli, 0);
  const countersOk = m.counters.usedMilli === chargedMilli && m.counters.reservedMilli === 0;
  const count = (kind: ProviderAnswer["kind"]) => m.answers.filter((a) => a.kind === kind).length;
  return {
    charges: charged.length,
    credits: charged.reduce((s, e) => s + e.milli, 0) / 1000,
    answers: { found: count("found"), notFound: count("not_found"), error: count("error") },
    duplicateCharges,
    chargesWithoutAnswer,
    answersNotCharged: counts.answersNotCharged,
    uncertainCacheHits: counts.uncertainCacheHits,
    cacheHits: counts.cacheHits,
    cachedCharged: counts.cachedCharged,
    wrongAmounts,
    detailsMismatches: counts.detailsMismatches,
    reservedLeft: reserved.length,
    counters: { ...m.counters, chargedMilli, ok: countersOk },
    rateLimitFailures: counts.rateLimitFailures,
    wrongOutcomes: counts.wrongOutcomes,
    unexpectedErrors: counts.unexpectedErrors,
    stopped: counts.stopped,
    stoppedCharged: counts.stoppedCharged,
    sample,
  };
}

/** Charged entries by (execution, source), and how many charges each cell got. */
function chargesByKey(charged: readonly LedgerEntry[]): {
  chargedKeys: Map<string, LedgerEntry[]>;
  perCell: Map<string, number>;
} {
  const chargedKeys = new Map<string, LedgerEntry[]>();
  const perCell = new Map<string, number>();
  for (const e of charged) {
    const k = chargeKey(e.executionId, e.source);
    chargedKeys.set(k, [...(chargedKeys.get(k) ?? []), e]);
    const c = e.rowId === null ? k : cellKey(e.rowId, e.groupId);
    perCell.set(c, (perCell.get(c) ?? 0) + 1);
  }
  return { chargedKeys, perCell };
}

function countDuplicates(perCell: Map<string, number>, note: Judging["note"]): number {
  let duplicateCharges = 0;
  for (const [k, n] of perCell) {
    if (n < 2) continue;
    duplicateCharges += n - 1;
    const [rowId = null, groupId = null] = k.includes("/") ? k.split("/") : [];
    note({ rowId, groupId, executionId: null, why: `charged ${n} times` });
  }
  return duplicateCharges;
}

/** Charges without an answer: no recorded answer of that execution, or no provider answer. */
function checkCharges(j: Judging): { wrongAmounts: number; chargesWithoutAnswer: number } {
  const { note } = j;
  let wrongAmounts = 0;
  const withInput: { entry: LedgerEntry; input: string | null }[] = [];
  const unrecorded = new Set<LedgerEntry>();
  for (const e of j.charged) {
    const cell = j.cells.get(cellKey(e.rowId, e.groupId));
    const paid = e.groupId === null ? undefined : j.paidBy.get(e.groupId);
    withInput.push({ entry: e, input: cell?.input ?? null });
    if (paid && e.milli !== paid.milli) {
      wrongAmounts++;
      note({ ...ids(e), why: `charged ${e.milli} milli, the cost is ${paid.milli}` });
    }
    const why = whyNotRecorded(e, cell, paid);
    if (why) {
      unrecorded.add(e);
      note({ ...ids(e), why });
    }
  }
  const unanswered = unmatchedCharges(withInput, j.m.answers, j.m.slackMs ?? 50);
  for (const e of unanswered)
    if (!unrecorded.has(e)) note({ ...ids(e), why: "no found answer from the provider before it" });
  return { wrongAmounts, chargesWithoutAnswer: new Set([...unrecorded, ...unanswered]).size };
}

/** Why a charge stands on no recorded answer of its execution; undefined: it does. */
function whyNotRecorded(
  e: LedgerEntry,
  cell: MoneyCell | undefined,
  paid: PaidGroup | undefined,
): string | undefined {
  const r = cell?.recorded;
  if (!cell || !paid || paid.source !== e.source) return "no paid cell of this source";
  if (cell.executionId !== e.executionId || cell.executionId !== e.cellExecutionId)
    return `the cell holds execution ${cell.executionId}`;
  if (!r?.found || r.cached === true)
    return r
      ? r.cached
        ? "its cell's answer is cached"
        : "its cell found nothing"
      : "nothing recorded";
  if (paid.blockId === undefined && (cell.status !== "completed" || cell.outcome !== "ok"))
    return `its cell ended ${cell.status}/${cell.outcome}`;
  if (paid.blockId === undefined && cell.attempt !== e.attempt)
    return `attempt ${e.attempt} was charged, attempt ${cell.attempt} recorded the answer`;
  return undefined;
}

/** Answers not charged, cached cells charged, costs in the details, outcomes. */
function checkPaidCells(j: Judging): CellCounts {
  const counts: CellCounts = {
    answersNotCharged: 0,
    uncertainCacheHits: 0,
    cacheHits: 0,
    cachedCharged: 0,
    detailsMismatches: 0,
    rateLimitFailures: 0,
    wrongOutcomes: 0,
    unexpectedErrors: 0,
    stopped: 0,
    stoppedCharged: 0,
  };
  const foundInputs = new Set(j.m.answers.filter((a) => a.kind === "found").map((a) => a.input));
  for (const c of j.m.cells) {
    const paid = j.paidBy.get(c.groupId);
    if (paid) judgePaidCell(j, counts, foundInputs, c, paid);
  }
  return counts;
}

function judgePaidCell(
  j: Judging,
  counts: CellCounts,
  foundInputs: Set<string>,
  c: MoneyCell,
  paid: PaidGroup,
): void {
  const { note } = j;
  const mine = j.chargedKeys.get(chargeKey(c.executionId, paid.source)) ?? [];
  const r = c.recorded;
  const at = { rowId: c.rowId, groupId: c.groupId, executionId: c.executionId };
  if (c.status === "cancelled") {
    counts.stopped++;
    if (mine.length > 0) counts.stoppedCharged++;
  }
  if (r?.cached === true) {
    counts.cacheHits++;
    if (mine.length > 0) {
      counts.cachedCharged++;
      note({ ...at, why: "a cached answer was charged" });
    }
  }
  if (r?.found && r.cached !== true && mine.length === 0) {
    // A cache hit needs an answer of the provider to have been kept.
    const kept = c.input !== null && foundInputs.has(c.input);
    if (r.cached === null && c.claims > 1 && kept) {
      counts.uncertainCacheHits++;
      note({ ...at, why: `not charged, claimed ${c.claims} times: maybe a cache hit` });
    } else {
      counts.answersNotCharged++;
      note({ ...at, why: "a recorded provider answer was not charged" });
    }
  }
  if (paid.blockId === undefined && c.status === "completed") {
    const milli = mine.reduce((s, e) => s + e.milli, 0);
    if (Math.round((r?.costCredits ?? 0) * 1000) !== milli) {
      counts.detailsMismatches++;
      note({ ...at, why: `details say ${r?.costCredits ?? 0} credits, charged ${milli} milli` });
    }
  }
  if (c.status === "error" && RATE_LIMIT.test(c.error ?? "")) {
    counts.rateLimitFailures++;
    note({ ...at, why: `failed for the rate limit: ${c.error}` });
  }
  const want = j.m.expected && c.input !== null ? j.m.expected(c.input) : undefined;
  if (want === undefined) return;
  if (c.status === "completed") {
    const got = c.outcome === "ok" && r?.found ? "found" : "not_found";
    if (want !== got) {
      counts.wrongOutcomes++;
      note({ ...at, why: `completed ${got}, the provider answers ${want}` });
    }
  } else if (c.status === "error" && want !== "error") {
    counts.unexpectedErrors++;
    note({ ...at, why: `ended error: ${c.error}` });
  }
}

function ids(e: LedgerEntry): Omit<MoneyFinding, "why"> {
  return { rowId: e.rowId, groupId: e.groupId, executionId: e.executionId };
}

/** What breaks the run: each a sentence for the report. */
export function moneyProblems(r: MoneyReport): string[] {
  const p: string[] = [];
  const say = (n: number, what: string) => {
    if (n > 0) p.push(`${n} ${what}`);
  };
  say(r.duplicateCharges, "duplicate charges");
  say(r.chargesWithoutAnswer, "charges without a recorded provider answer");
  say(r.answersNotCharged, "recorded provider answers not charged");
  say(r.cachedCharged, "cached answers charged");
  say(r.wrongAmounts, "charges of the wrong amount");
  say(r.detailsMismatches, "cells whose details.costCredits is not what they were charged");
  say(r.reservedLeft, "reservations left at rest");
  say(r.rateLimitFailures, "cells failed for the rate limit");
  say(r.wrongOutcomes, "paid cells completed with an outcome their provider did not answer");
  if (!r.counters.ok)
    p.push(
      `workspace counters off: used ${r.counters.usedMilli} milli for ${r.counters.chargedMilli} charged, reserved ${r.counters.reservedMilli}`,
    );
  return p;
}

/** The figures, for a scenario's summary line. */
export function moneyLine(r: MoneyReport): string {
  const a = r.answers;
  return `money: ${r.charges} charges (${r.credits} credits) for ${a.found} found answers (${a.notFound} not found, ${a.error} failed), duplicates ${r.duplicateCharges}, without an answer ${r.chargesWithoutAnswer}, answers not charged ${r.answersNotCharged}${r.uncertainCacheHits > 0 ? ` (+${r.uncertainCacheHits} after a re-drive, maybe cached)` : ""}, cache hits ${r.cacheHits} (charged ${r.cachedCharged}), reserved left ${r.reservedLeft}, counters ${r.counters.ok ? "ok" : "OFF"}, rate-limit failures ${r.rateLimitFailures}${r.stopped > 0 ? `; ${r.stopped} paid cells stopped, ${r.stoppedCharged} of them charged (answer recorded first)` : ""}`;
}
