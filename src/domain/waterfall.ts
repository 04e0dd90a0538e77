/**
 * What a waterfall group's steps decide, without I/O: whether a step's answer is found,
 * rejected (answered, but its `validate` failed) or empty, and how the cell ends from its
 * steps. Invariants: a step with every mapped output empty is `empty`, never `found`;
 * `validate` is judged on the step's answer alone, with the same operators and emptiness
 * as a row's `where` (text `contains` ignores case; empty = absent, null, "", [] or {});
 * a cell ends `ok` only with a winner, `error` only when no step answered and one failed.
 */
import type { WhereOp } from "@/contracts/where";
import type { Block, WorkflowDefinition } from "@/contracts/workflow";
import { assertNever } from "./statuses";

export type WaterfallStepStatus = "found" | "rejected" | "empty" | "error" | "not_called";

/** One check of a step's answer: its output `output` against `value` by `op`. */
export interface StepCheck {
  output: string;
  op: WhereOp;
  value?: unknown;
}

/** Empty like an empty cell in a `where`: absent, null, blank text, [] or {}. */
export function isEmptyAnswer(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

/** Why a check's value does not fit its operator (null: it fits). */
export function validationValueProblem(check: StepCheck): string | null {
  const { op, value } = check;
  if (op === "empty" || op === "not_empty")
    return value === undefined ? null : `"${op}" takes no value`;
  if (value === undefined || value === null)
    return `"${op}" needs a value (use "empty" to check for an empty answer)`;
  if (op === "contains" && (typeof value !== "string" || value === ""))
    return "contains needs a non-empty string";
  if ((op === "gt" || op === "gte" || op === "lt" || op === "lte") && typeof value === "object")
    return `"${op}" needs a number or a text (a date)`;
  return null;
}

/** Both as numbers when both read as finite numbers; else null. */
function numbers(a: unknown, b: unknown): [number, number] | null {
  const n = (v: unknown) =>
    typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  const x = n(a);
  const y = n(b);
  return Number.isFinite(x) && Number.isFinite(y) ? [x, y] : null;
}

function same(a: unknown, b: unknown): boolean {
  const nums = numbers(a, b);
  if (nums) return nums[0] === nums[1];
  if (typeof a === "object" || typeof b === "object")
    return JSON.stringify(a) === JSON.stringify(b);
  return String(a) === String(b);
}

/** -1, 0, 1; null when the two do not compare (a missing answer, an object). */
function order(a: unknown, b: unknown): number | null {
  if (isEmptyAnswer(a) || typeof a === "object" || typeof b === "object") return null;
  const nums = numbers(a, b);
  if (nums) return Math.sign(nums[0] - nums[1]);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function passesCheck(answer: unknown, check: StepCheck): boolean {
  const { op, value } = check;
  switch (op) {
    case "empty":
      return isEmptyAnswer(answer);
    case "not_empty":
      return !isEmptyAnswer(answer);
    case "eq":
      return !isEmptyAnswer(answer) && same(answer, value);
    case "neq":
      return isEmptyAnswer(answer) || !same(answer, value);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const o = order(answer, value);
      if (o === null) return false;
      return op === "gt" ? o > 0 : op === "gte" ? o >= 0 : op === "lt" ? o < 0 : o <= 0;
    }
    case "contains":
      if (typeof answer === "string")
        return answer.toLowerCase().includes(String(value).toLowerCase());
      return Array.isArray(answer) && answer.some((v) => same(v, value));
    default:
      return assertNever(op);
  }
}

/**
 * A step's answer, by output name: `empty` when nothing was mapped, else `found` when
 * every check holds (default: `defaultOutput` is not empty), else `rejected`.
 */
export function judgeAnswer(
  answer: Readonly<Record<string, unknown>>,
  checks: readonly StepCheck[] | undefined,
  defaultOutput: string | undefined,
): "found" | "rejected" | "empty" {
  if (Object.values(answer).every(isEmptyAnswer)) return "empty";
  const all =
    checks ?? (defaultOutput === undefined ? [] : [{ output: defaultOutput, op: "not_empty" }]);
  return all.every((c) => passesCheck(answer[c.output], c)) ? "found" : "rejected";
}

/**
 * How the cell ends from its steps' statuses (`skipped`: the step was not called for a
 * missing input): `ok` with a winner; `error` when no step answered and one failed;
 * `skipped` when no step could be called; else `not_found`.
 */
export function waterfallEnd(
  steps: readonly { status: WaterfallStepStatus; skipped?: boolean }[],
): "ok" | "not_found" | "skipped" | "error" {
  if (steps.some((s) => s.status === "found")) return "ok";
  const answered = steps.some((s) => s.status === "rejected" || s.status === "empty");
  if (!answered && steps.some((s) => s.status === "error")) return "error";
  if (!answered && steps.every((s) => s.skipped === true)) return "skipped";
  return "not_found";
}

const PAUSING = new Set<Block["type"]>(["approval", "wait"]);

/** Whether a workflow has a block that can pause its run (which a waterfall step cannot). */
export function canPause(definition: Pick<WorkflowDefinition, "blocks">): boolean {
  return definition.blocks.some((b) => PAUSING.has(b.type));
}
