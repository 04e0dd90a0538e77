/**
 * The plan's cap on rows per table, as requests meet it: the caps handed to the insert
 * statement (which holds them, store/rows/insert.ts), the measure of a refused CSV
 * import's whole file, and the one message every refused write path answers.
 */
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import type { Plan } from "@/domain/statuses";
import { planLimits } from "@/limits/plans";
import { tableFill } from "@/store/tables/read";
import type { ServiceContext } from "./context";

/** 402 `limit_reached`: `adding` more rows would take the table past `cap`. */
export function rowCapReached(
  over: { plan: Plan; cap: number; rowCount: number },
  adding: number,
): Failure {
  const limit = `its plan's limit of ${count(over.cap)} rows (${over.plan} plan): delete rows or upgrade`;
  const message =
    over.rowCount >= over.cap
      ? `This table is at ${limit}`
      : `This table holds ${count(over.rowCount)} rows; ${count(adding)} more would pass ${limit}`;
  return { code: "limit_reached", message };
}

/**
 * Whether `adding` rows fit the table now (its committed count under its plan's cap).
 * Only a first answer: the insert statement checks again, and holds it, as it writes.
 */
export async function checkRoomFor(
  ctx: ServiceContext,
  tableId: string,
  adding: number,
): Promise<Result<null, Failure>> {
  const fill = await tableFill(ctx.db, tableId);
  if (!fill) return { ok: false, reason: notFound("table") };
  const cap = planLimits(fill.plan).rowsPerTable;
  if (cap === null || fill.rowCount + adding <= cap) return { ok: true, value: null };
  return { ok: false, reason: rowCapReached({ ...fill, cap }, adding) };
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}
