/**
 * One take from a key's sliding log in Postgres (cellflow_rate_take, migrations 0019 and
 * 0032): a slot reserved at the database's clock (now, or `waitMs` ahead), or a refusal
 * with how long until a slot is in reach. Invariants: a refusal is a read (nothing locked
 * or written); a grant is decided and written under the key's row lock in one statement,
 * so concurrent takers in any number of processes never overfill a window.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface TakeRequest {
  key: string;
  limit: number;
  windowMs: number;
  spacingMs: number;
  guardMs: number;
  /** The farthest ahead a slot may be reserved. */
  reachMs: number;
}

export type TakeOutcome =
  | { granted: true; atMs: number; waitMs: number }
  | { granted: false; waitMs: number };

export async function takeFromLog(db: Db, r: TakeRequest): Promise<TakeOutcome> {
  const [row] = await queryRows<{ granted: boolean; wait_ms: number; at_ms: string | null }>(
    db,
    sql`select granted, wait_ms, at_ms
          from cellflow_rate_take(${r.key}, ${r.limit}::int, ${r.windowMs}::int,
                                  ${r.spacingMs}::int, ${r.guardMs}::int, ${Math.round(r.reachMs)}::int)`,
  );
  if (!row) throw new Error("cellflow_rate_take returned no row");
  return row.granted
    ? { granted: true, atMs: Number(row.at_ms), waitMs: Math.max(0, Number(row.wait_ms)) }
    : { granted: false, waitMs: Math.max(1, Number(row.wait_ms)) };
}
