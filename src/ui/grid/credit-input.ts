/**
 * What a person types as a credit amount in the grid (a run's per-row budget, the table's
 * default): empty is none; otherwise a number above 0 with at most three decimals, the
 * precision credits are kept to. Pure, so it is unit-tested.
 */
export type CreditInput = { ok: true; value: number | null } | { ok: false };

export function readCreditInput(text: string): CreditInput {
  const t = text.trim();
  if (t === "") return { ok: true, value: null };
  if (!/^\d+(\.\d{1,3})?$/.test(t)) return { ok: false };
  const value = Number(t);
  return value > 0 && value <= 1_000_000_000 ? { ok: true, value } : { ok: false };
}
