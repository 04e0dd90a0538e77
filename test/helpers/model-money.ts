/**
 * The engine model's money judge (I6, docs/engine-invariants.md): per execution of the
 * paid group, the credits charged equal its cost times the provider answers whose
 * recording write won its fence — exactly once whatever the Stops, re-drives, resumes and
 * halts; a cache hit is never charged; nothing is left reserved once the schedule is
 * drained; nothing is charged for a row the provider never answered; the counters
 * the caps read (the workspace's, a capped run's) say what the ledger says; and no row
 * was charged past its run's per-row budget (`maxCreditsPerRow`). The paid
 * group's answers are recorded by its cells' terminal writes, a paid block's by its
 * checkpoint (reused, not charged again, by the execution a resume copies it to). Pure:
 * it reads the ledger, the paid cells' audited completions, the executions' checkpoints,
 * the counters and the provider's log. Unit-tested on made-up histories
 * (test/unit/model-money.test.ts).
 */

import type { CreditState } from "@/domain/statuses";

export interface LedgerEntry {
  /** The charge id: for an enrichment group, the cell's execution. */
  executionId: string;
  source: string;
  state: CreditState;
  milli: number;
  rowId: string | null;
}

/** A committed completion of a paid cell (its terminal write won). */
export interface PaidEnd {
  rowId: string;
  executionId: string;
  outcome: string | null;
  /** Its answer came from the result cache (`details.cached`). */
  cached: boolean;
}

/** An answer the provider sent, by the row whose input it was for. */
export interface ProviderAnswer {
  rowId: string;
  kind: "found" | "not_found" | "error";
}

/** An execution of the group with the paid block, as its checkpoints say at the end. */
export interface BlockRecord {
  executionId: string;
  /** The executions it resumes (a resume copies their checkpoints under its id). */
  resumes: string[];
  /** Its checkpoint of the paid block holds a provider's answer. */
  answered: boolean;
}

/** The counters the caps read, at rest, and what the ledger says they should be. */
export interface Counters {
  /** The workspace's reserved milli-credits, and its charges this month: counter, ledger. */
  reservedMilli: number;
  usedMilli: number;
  ledgerUsedMilli: number;
  /** Each capped run: its committed counter and its ledger charges. */
  runs: { id: string; committedMilli: number; chargedMilli: number }[];
  /**
   * Each run with a per-row budget (`maxCreditsPerRow`): its budget and, per row, what the
   * ledger charged that row's cells of the run. Absent: none to judge.
   */
  rowBudgets?: { id: string; maxMilli: number; rows: { rowId: string; chargedMilli: number }[] }[];
}

export interface Money {
  /** The paid group's ledger source (an enrichment group's: its enrichment id). */
  source: string;
  costMilli: number;
  /** The ledger entries of the table (all states). */
  ledger: LedgerEntry[];
  /** The paid group's completions, from the audited history. */
  ends: PaidEnd[];
  answers: ProviderAnswer[];
  /** The paid block (`<enrichmentId>@<blockId>`) and the executions that may have run it. */
  block?: { source: string; records: BlockRecord[] };
  counters?: Counters;
}

export function checkCharges(m: Money): string[] {
  const found: string[] = [];
  for (const e of m.ledger)
    if (e.state === "reserved")
      found.push(`I6: ${e.executionId} ${e.source} left reserved (${e.milli} milli)`);
  // An execution owes its cost once if a completion of it recorded a provider's answer.
  const owed = new Map<string, string>();
  for (const end of m.ends)
    if (end.outcome === "ok" && !end.cached) owed.set(end.executionId, end.rowId);
  found.push(...weigh(m, m.source, new Set(owed.keys())));
  if (m.block) {
    // A checkpoint owes its cost in the execution that recorded it, not in one a resume
    // copied it to (that one reused the answer).
    const answered = new Set(m.block.records.filter((r) => r.answered).map((r) => r.executionId));
    const recorded = m.block.records
      .filter((r) => r.answered && !r.resumes.some((x) => answered.has(x)))
      .map((r) => r.executionId);
    found.push(...weigh(m, m.block.source, new Set(recorded)));
  }
  const answeredRows = new Set(m.answers.filter((a) => a.kind === "found").map((a) => a.rowId));
  for (const e of m.ledger)
    if (e.state === "charged" && e.milli > 0 && (e.rowId === null || !answeredRows.has(e.rowId)))
      found.push(
        `I6: execution ${e.executionId} charged for row ${e.rowId}, which no provider answered`,
      );
  if (m.counters) found.push(...checkCounters(m.counters));
  return found;
}

/** Each execution's charges of `source` against the cost it owes (once, or nothing). */
function weigh(m: Money, source: string, owing: Set<string>): string[] {
  const found: string[] = [];
  const charged = new Map<string, number>();
  for (const e of m.ledger)
    if (e.state === "charged" && e.source === source)
      charged.set(e.executionId, (charged.get(e.executionId) ?? 0) + e.milli);
  for (const exec of new Set([...charged.keys(), ...owing])) {
    const got = charged.get(exec) ?? 0;
    const want = owing.has(exec) ? m.costMilli : 0;
    if (got !== want)
      found.push(
        `I6: execution ${exec} charged ${got} milli for ${source}, owes ${want} (${
          owing.has(exec) ? "an answer was recorded" : "no answer was recorded"
        })`,
      );
  }
  return found;
}

/** At rest nothing is reserved, and the counters the caps read agree with the ledger. */
function checkCounters(c: Counters): string[] {
  const found: string[] = [];
  if (c.reservedMilli !== 0)
    found.push(`I6: the workspace holds ${c.reservedMilli} milli reserved at rest`);
  if (c.usedMilli !== c.ledgerUsedMilli)
    found.push(
      `I6: the workspace counts ${c.usedMilli} milli used, its ledger ${c.ledgerUsedMilli}`,
    );
  for (const r of c.runs)
    if (r.committedMilli !== r.chargedMilli)
      found.push(
        `I6: run ${r.id} counts ${r.committedMilli} milli against its cap, its ledger ${r.chargedMilli}`,
      );
  for (const run of c.rowBudgets ?? [])
    for (const row of run.rows)
      if (row.chargedMilli > run.maxMilli)
        found.push(
          `I6: row ${row.rowId} charged ${row.chargedMilli} milli in run ${run.id}, past its budget of ${run.maxMilli}`,
        );
  return found;
}
