/**
 * What the money judge (`money.ts`) reads of a run: the provider's log of its answers,
 * the ledger, the paid groups and cells with what they recorded, the workspace's
 * counters. `ledger-read.ts` reads them from a run's database; the unit test builds them
 * by hand.
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
