/**
 * One take from a key's weighted sliding log in Postgres (cellflow_rate_take_weighted,
 * the custom migration llm_rate_take): a slot for a call of `weight` reserved at the
 * database's clock (now, or `waitMs` ahead), or a refusal with how long until one may be.
 * Invariants: a refusal is a read (nothing locked or written); a grant is decided and
 * written under the key's row lock in one statement, so concurrent takers in any number
 * of processes never put more than the limits in any window; no slot is given before
 * the key's cool-down (rate_limit_cool_downs) ends.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { TakeOutcome } from "./take";

export interface WeightedTakeRequest {
  key: string;
  /** The cool-down's key (the log's key without its limits). */
  coolKey: string;
  limit: number;
  windowMs: number;
  spacingMs: number;
  guardMs: number;
  reachMs: number;
  weightLimit: number;
  weight: number;
  /** A part of the span, and the most weight it may hold (slots.ts WEIGHT_PARTS). */
  partSpanMs: number;
  partLimit: number;
  /** The most one entry counts in a part (slots.ts `partWeight`); undefined: its weight. */
  partCap: number | undefined;
  aheadLimit: number;
}

export async function takeWeighted(db: Db, r: WeightedTakeRequest): Promise<TakeOutcome> {
  const [row] = await queryRows<{ granted: boolean; wait_ms: number; at_ms: string | null }>(
    db,
    sql`select granted, wait_ms, at_ms
          from cellflow_rate_take_weighted(${r.key}, ${r.coolKey}, ${r.limit}::int,
                 ${r.windowMs}::int, ${r.spacingMs}::int, ${r.guardMs}::int,
                 ${Math.round(r.reachMs)}::int, ${r.weightLimit}::int, ${r.weight}::int,
                 ${r.partSpanMs}::int, ${r.partLimit}::int, ${r.aheadLimit}::int,
                 ${r.partCap ?? null}::int)`,
  );
  if (!row) throw new Error("cellflow_rate_take_weighted returned no row");
  return row.granted
    ? { granted: true, atMs: Number(row.at_ms), waitMs: Math.max(0, Number(row.wait_ms)) }
    : { granted: false, waitMs: Math.max(1, Number(row.wait_ms)) };
}
