import { type Db, queryRows } from "@db/client";
import { dispatches } from "@db/schema";
import { sql } from "drizzle-orm";
import { newId } from "@/domain/ids";
import type { RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { lockAgainstStop } from "../stops/stop-lock";
import { milliOf } from "../usage/amounts";

export interface NewDispatch {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  /** The stamping cursor's start: rows at or before this position are out (default -1). */
  stampAfter?: number;
  rowLimit: number | null;
  window: number;
  scanline?: boolean;
  dependsOn?: Record<string, string[]>;
  where?: TypedCondition[] | null;
  /** The run's credit cap (null or absent: none). */
  maxCredits?: number | null;
  /** The run's per-row budget in credits (null or absent: the table's default, if any). */
  maxCreditsPerRow?: number | null;
  /** Error/cancelled cells start from their last execution's checkpoints. */
  resume?: boolean;
  /** Mode `stale`: completed cells that ended more than this many hours before the run. */
  staleAfterHours?: number | null;
  /** The run span's W3C traceparent (null or absent: not traced). */
  traceContext?: string | null;
}

/**
 * A new run, `stamping` from the start: until its last page is stamped the window must
 * not call it completed, even with nothing of it queued yet (a re-drive pass in that gap
 * would otherwise complete it empty, and its cells would run outside any window). A run
 * without a per-row budget of its own takes the table's default as it is now, in the
 * insert itself: a later change of the default leaves the run as it started.
 */
export async function createDispatch(db: Db, d: NewDispatch): Promise<string> {
  const id = newId("run");
  const { maxCredits, maxCreditsPerRow, ...rest } = d;
  const own = maxCreditsPerRow == null ? null : milliOf(maxCreditsPerRow);
  await db.insert(dispatches).values({
    id,
    ...rest,
    maxCreditsMilli: maxCredits == null ? null : milliOf(maxCredits),
    maxCreditsPerRowMilli: sql`coalesce(${own}::bigint,
      (select t.max_credits_per_row_milli from tables t where t.id = ${d.tableId}))`,
    stamping: true,
  });
  return id;
}

/**
 * An auto-fire's run: created only while the table's auto-run switch is on (null: off, no
 * run). The table's stop lock, taken shared in a statement of its own before the switch is
 * read (turning the switch off takes it exclusively), makes a switch turned off
 * concurrently either after the run (which then goes on: turning it off cancels nothing)
 * or before it (no run), never half of one; and once the switch-off answered, no run that
 * read it on is still to commit. A lock, not a share lock on the table's row: that would
 * wait for every transaction that bumped the row's `next_position` (a long import).
 */
export async function createAutoFireDispatch(db: Db, d: NewDispatch): Promise<string | null> {
  return db.transaction(async (tx) => {
    await lockAgainstStop(tx, d.tableId);
    const on = await queryRows<{ ok: number }>(
      tx,
      sql`select 1 as ok from tables where id = ${d.tableId} and auto_run`,
    );
    if (on.length === 0) return null;
    return createDispatch(tx, d);
  });
}
