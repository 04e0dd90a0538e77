/**
 * W8's arithmetic: which step of the three answers each row, what the waterfall should
 * then call and charge, and the rate a step's calls achieved. Kept apart from the run so
 * the unit tests check the expectations the benchmark judges itself against.
 */

/** The step that answers row `i`: of every ten rows, four by step 1, three each by 2 and 3. */
export function w8StepOf(i: number): 1 | 2 | 3 {
  const r = i % 10;
  return r < 4 ? 1 : r < 7 ? 2 : 3;
}

/** How many of `rows` rows each step answers. */
export function w8Answers(rows: number): [number, number, number] {
  let [a1, a2, a3] = [0, 0, 0];
  for (let i = 0; i < rows; i++) {
    const step = w8StepOf(i);
    if (step === 1) a1 += 1;
    else if (step === 2) a2 += 1;
    else a3 += 1;
  }
  return [a1, a2, a3];
}

export interface W8Expected {
  /** Calls per step: every row reaches step 1; a step is called where no earlier one answered. */
  calls: [number, number, number];
  /** Credits: each answer at its step's cost. */
  credits: number;
  creditsByStep: [number, number, number];
}

export function w8Expected(
  answers: readonly [number, number, number],
  costs: readonly [number, number, number],
): W8Expected {
  const [a1, a2, a3] = answers;
  const rows = a1 + a2 + a3;
  const creditsByStep: [number, number, number] = [a1 * costs[0], a2 * costs[1], a3 * costs[2]];
  return {
    calls: [rows, rows - a1, rows - a1 - a2],
    credits: creditsByStep[0] + creditsByStep[1] + creditsByStep[2],
    creditsByStep,
  };
}

/** Calls per second over the grants' span: n grants span n - 1 gaps (0 under two grants). */
export function achievedPerSec(grantsAt: readonly number[]): number {
  if (grantsAt.length < 2) return 0;
  const sorted = [...grantsAt].sort((a, b) => a - b);
  const span = (sorted.at(-1) ?? 0) - (sorted[0] ?? 0);
  return ((sorted.length - 1) * 1000) / Math.max(1, span);
}

/** Measured over expected, 1 when both are 0. */
export function ratioOf(measured: number, expected: number): number {
  if (expected === 0) return measured === 0 ? 1 : Number.POSITIVE_INFINITY;
  return measured / expected;
}
