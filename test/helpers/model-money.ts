/**
 * The engine model's money judge (I6, docs/engine-invariants.md): per execution of the
 * paid group, the credits charged equal its cost times the provider answers whose
 * recording write won its fence — exactly once whatever the Stops, re-drives, resumes and
 * halts; a cache hit is never charged; nothing is left reserved once the schedule is
 * drained; and nothing is charged for a row the provider never answered. Pure: it reads
 * the ledger, the paid cells' audited completions and the provider's log. Unit-tested on
 * made-up histories (test/unit/model-money.test.ts).
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

export interface Money {
  /** The paid group's ledger source (an enrichment group's: its enrichment id). */
  source: string;
  costMilli: number;
  /** The ledger entries of the table (all states). */
  ledger: LedgerEntry[];
  /** The paid group's completions, from the audited history. */
  ends: PaidEnd[];
  answers: ProviderAnswer[];
}

export function checkCharges(m: Money): string[] {
  const found: string[] = [];
  for (const e of m.ledger)
    if (e.state === "reserved")
      found.push(`I6: ${e.executionId} ${e.source} left reserved (${e.milli} milli)`);
  const charged = new Map<string, { milli: number; rowId: string | null }>();
  for (const e of m.ledger) {
    if (e.state !== "charged" || e.source !== m.source) continue;
    const was = charged.get(e.executionId);
    charged.set(e.executionId, { milli: (was?.milli ?? 0) + e.milli, rowId: e.rowId });
  }
  // An execution owes its cost once if a completion of it recorded a provider's answer.
  const owed = new Map<string, string>();
  for (const end of m.ends)
    if (end.outcome === "ok" && !end.cached) owed.set(end.executionId, end.rowId);
  const executions = new Set([...charged.keys(), ...owed.keys()]);
  for (const exec of executions) {
    const got = charged.get(exec)?.milli ?? 0;
    const want = owed.has(exec) ? m.costMilli : 0;
    if (got !== want)
      found.push(
        `I6: execution ${exec} charged ${got} milli, owes ${want} (${
          owed.has(exec) ? "an answer was recorded" : "no answer was recorded"
        })`,
      );
  }
  const answered = new Set(m.answers.filter((a) => a.kind === "found").map((a) => a.rowId));
  for (const [exec, c] of charged)
    if (c.milli > 0 && (c.rowId === null || !answered.has(c.rowId)))
      found.push(`I6: execution ${exec} charged for row ${c.rowId}, which no provider answered`);
  return found;
}
