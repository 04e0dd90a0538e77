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
import type { CreditState } from "@/domain/statuses";

/** What the provider said for one call, from its own log. */
export interface ProviderAnswer {
  /** What was asked (a domain, a URL): the paid cell's input. */
  input: string;
  kind: "found" | "not_found" | "error";
  /** Wall clock, ms. */
  at: number;
}

export interface LedgerEntry {
  executionId: string;
  source: string;
  milli: number;
  state: CreditState;
  rowId: string | null;
  groupId: string | null;
  cellExecutionId: string | null;
  attempt: number | null;
  /** Wall clock, ms (null while reserved). */
  chargedAt: number | null;
}

/** A group whose cells make a paid call: an enrichment group, or a workflow's enrichment block. */
export interface PaidGroup {
  groupId: string;
  /** The ledger's source: `<enrichmentId>`, or `<enrichmentId>@<blockId>` for a block. */
  source: string;
  /** The enrichment's cost, in 1/1000 credit. */
  milli: number;
  /** The block making the call; absent: the group is the enrichment. */
  blockId?: string;
}

export interface MoneyCell {
  rowId: string;
  groupId: string;
  executionId: string;
  status: string;
  outcome: string | null;
  /** The cell's attempt now (the one whose terminal write ended it). */
  attempt: number;
  error: string | null;
  /** What its paid call asks (the row's domain or URL). */
  input: string | null;
  /**
   * The answer its execution recorded: a group's terminal write (`details`), a block's
   * checkpoint; null when nothing was recorded. `cached` null: the record does not say.
   */
  recorded: { found: boolean; cached: boolean | null; costCredits: number | null } | null;
  /** How many times the cell was claimed under its execution (its attempts that ran). */
  claims: number;
}

export interface MoneyInput {
  paid: readonly PaidGroup[];
  cells: readonly MoneyCell[];
  /** Every entry of the workspace, every state. */
  ledger: readonly LedgerEntry[];
  answers: readonly ProviderAnswer[];
  counters: { usedMilli: number; reservedMilli: number };
  /** What the provider answers for an input, when the workload knows it (deterministic). */
  expected?: (input: string) => ProviderAnswer["kind"];
  /** How much later than the charge an answer may be logged (two clocks of one machine). */
  slackMs?: number;
}

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

export function judgeMoney(m: MoneyInput): MoneyReport {
  const slackMs = m.slackMs ?? 50;
  const paidBy = new Map(m.paid.map((p) => [p.groupId, p]));
  const sources = new Set(m.paid.map((p) => p.source));
  const cells = new Map(m.cells.map((c) => [cellKey(c.rowId, c.groupId), c]));
  const sample: MoneyFinding[] = [];
  const note = (f: MoneyFinding) => {
    if (sample.length < SAMPLE) sample.push(f);
  };

  const charged = m.ledger.filter((e) => e.state === "charged" && sources.has(e.source));
  const chargedKeys = new Map<string, LedgerEntry[]>();
  const perCell = new Map<string, number>();
  for (const e of charged) {
    const k = chargeKey(e.executionId, e.source);
    chargedKeys.set(k, [...(chargedKeys.get(k) ?? []), e]);
    const c = e.rowId === null ? k : cellKey(e.rowId, e.groupId);
    perCell.set(c, (perCell.get(c) ?? 0) + 1);
  }

  let duplicateCharges = 0;
  for (const [k, n] of perCell) {
    if (n < 2) continue;
    duplicateCharges += n - 1;
    const [rowId = null, groupId = null] = k.includes("/") ? k.split("/") : [];
    note({ rowId, groupId, executionId: null, why: `charged ${n} times` });
  }

  // Charges without an answer: no recorded answer of that execution, or no provider answer.
  let wrongAmounts = 0;
  const withInput: { entry: LedgerEntry; input: string | null }[] = [];
  const unrecorded = new Set<LedgerEntry>();
  for (const e of charged) {
    const cell = cells.get(cellKey(e.rowId, e.groupId));
    const paid = e.groupId === null ? undefined : paidBy.get(e.groupId);
    withInput.push({ entry: e, input: cell?.input ?? null });
    if (paid && e.milli !== paid.milli) {
      wrongAmounts++;
      note({ ...ids(e), why: `charged ${e.milli} milli, the cost is ${paid.milli}` });
    }
    const r = cell?.recorded;
    let why: string | undefined;
    if (!cell || !paid || paid.source !== e.source) why = "no paid cell of this source";
    else if (cell.executionId !== e.executionId || cell.executionId !== e.cellExecutionId)
      why = `the cell holds execution ${cell.executionId}`;
    else if (!r?.found || r.cached === true)
      why = r
        ? r.cached
          ? "its cell's answer is cached"
          : "its cell found nothing"
        : "nothing recorded";
    else if (paid.blockId === undefined && (cell.status !== "completed" || cell.outcome !== "ok"))
      why = `its cell ended ${cell.status}/${cell.outcome}`;
    else if (paid.blockId === undefined && cell.attempt !== e.attempt)
      why = `attempt ${e.attempt} was charged, attempt ${cell.attempt} recorded the answer`;
    if (why) {
      unrecorded.add(e);
      note({ ...ids(e), why });
    }
  }
  const unanswered = unmatchedCharges(withInput, m.answers, slackMs);
  for (const e of unanswered)
    if (!unrecorded.has(e)) note({ ...ids(e), why: "no found answer from the provider before it" });
  const chargesWithoutAnswer = new Set([...unrecorded, ...unanswered]).size;

  // Answers not charged, cached cells charged, costs in the details.
  let answersNotCharged = 0;
  let uncertainCacheHits = 0;
  let cacheHits = 0;
  let cachedCharged = 0;
  let detailsMismatches = 0;
  let rateLimitFailures = 0;
  let wrongOutcomes = 0;
  let unexpectedErrors = 0;
  const foundInputs = new Set(m.answers.filter((a) => a.kind === "found").map((a) => a.input));
  let stopped = 0;
  let stoppedCharged = 0;
  for (const c of m.cells) {
    const paid = paidBy.get(c.groupId);
    if (!paid) continue;
    const mine = chargedKeys.get(chargeKey(c.executionId, paid.source)) ?? [];
    const r = c.recorded;
    const at = { rowId: c.rowId, groupId: c.groupId, executionId: c.executionId };
    if (c.status === "cancelled") {
      stopped++;
      if (mine.length > 0) stoppedCharged++;
    }
    if (r?.cached === true) {
      cacheHits++;
      if (mine.length > 0) {
        cachedCharged++;
        note({ ...at, why: "a cached answer was charged" });
      }
    }
    if (r?.found && r.cached !== true && mine.length === 0) {
      // A cache hit needs an answer of the provider to have been kept.
      const kept = c.input !== null && foundInputs.has(c.input);
      if (r.cached === null && c.claims > 1 && kept) {
        uncertainCacheHits++;
        note({ ...at, why: `not charged, claimed ${c.claims} times: maybe a cache hit` });
      } else {
        answersNotCharged++;
        note({ ...at, why: "a recorded provider answer was not charged" });
      }
    }
    if (paid.blockId === undefined && c.status === "completed") {
      const milli = mine.reduce((s, e) => s + e.milli, 0);
      if (Math.round((r?.costCredits ?? 0) * 1000) !== milli) {
        detailsMismatches++;
        note({ ...at, why: `details say ${r?.costCredits ?? 0} credits, charged ${milli} milli` });
      }
    }
    if (c.status === "error" && RATE_LIMIT.test(c.error ?? "")) {
      rateLimitFailures++;
      note({ ...at, why: `failed for the rate limit: ${c.error}` });
    }
    const want = m.expected && c.input !== null ? m.expected(c.input) : undefined;
    if (want === undefined) continue;
    if (c.status === "completed") {
      const got = c.outcome === "ok" && r?.found ? "found" : "not_found";
      if (want !== got) {
        wrongOutcomes++;
        note({ ...at, why: `completed ${got}, the provider answers ${want}` });
      }
    } else if (c.status === "error" && want !== "error") {
      unexpectedErrors++;
      note({ ...at, why: `ended error: ${c.error}` });
    }
  }

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
    answersNotCharged,
    uncertainCacheHits,
    cacheHits,
    cachedCharged,
    wrongAmounts,
    detailsMismatches,
    reservedLeft: reserved.length,
    counters: { ...m.counters, chargedMilli, ok: countersOk },
    rateLimitFailures,
    wrongOutcomes,
    unexpectedErrors,
    stopped,
    stoppedCharged,
    sample,
  };
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
