/**
 * The per-row carrier lock: a session-level advisory lock on one pinned, direct
 * connection. Invariants: taken with pg_try_advisory_lock (never waits: contention means
 * the holder drains the row); always unlocked before the connection goes back to the
 * pool (or the connection is destroyed); a heartbeat notices a lost session and aborts
 * the cascade; a crashed holder's lock dies with its connection.
 */
import { createHash } from "node:crypto";
import { drizzle as drizzleNeon } from "drizzle-orm/neon-serverless";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { Database, Db, SessionClient } from "../../db/client";
import * as schema from "../../db/schema";
import { type Release, unlockAndAdvance } from "../store/dispatches/advance";

/** 64-bit key from SHA-256, stable across Postgres versions (unlike hashtext). */
export function rowLockKey(tableId: string, rowId: string): string {
  const digest = createHash("sha256").update(`cascade:${tableId}:${rowId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

export interface RowSession {
  /** Queries on the pinned connection: the carrier's writes ride the lock's session. */
  db: Db;
  /** Aborts when the session is lost (heartbeat failed or connection error). */
  lost: AbortSignal;
  /**
   * Unlocks and, in the same round trip, tells whether the row has queued cells (ones
   * stamped while we were finishing, whose own carrier may have bailed on our lock) and
   * slides the windows of these dispatches. `advances` is null when that could not be
   * done (the connection was destroyed instead, which frees the lock).
   */
  release(dispatchIds?: readonly string[]): Promise<{
    moreQueued: boolean;
    advances: Release["advances"] | null;
  }>;
}

const HEARTBEAT_MS = 30_000;

/** Takes the row lock; null when another session holds it. */
export async function acquireRowLock(
  database: Database,
  tableId: string,
  rowId: string,
): Promise<RowSession | null> {
  const client: SessionClient = await database.pool.connect();
  const key = rowLockKey(tableId, rowId);
  let got: boolean;
  try {
    const res = await client.query({
      name: "cf_row_lock",
      text: "select pg_try_advisory_lock($1::bigint) as got",
      values: [key],
    });
    got = res.rows[0]?.got === true;
  } catch (err) {
    client.release(true);
    throw err;
  }
  if (!got) {
    client.release();
    return null;
  }
  const lostController = new AbortController();
  const onError = () => lostController.abort(new Error("the row lock's database session was lost"));
  client.on("error", onError);
  const detach = () => (client as unknown as NodeJS.EventEmitter).removeListener("error", onError);
  const heartbeat = setInterval(() => {
    client
      .query(
        "select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted",
      )
      .then((res) => {
        if (res.rows[0]?.n === 0) lostController.abort(new Error("the row lock was lost"));
      })
      .catch(onError);
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const db = (database.driver === "neon"
    ? drizzleNeon({ client: client as never, schema })
    : drizzlePg({ client: client as never, schema })) as unknown as Db;
  let released = false;
  return {
    db,
    lost: lostController.signal,
    async release(dispatchIds = []) {
      if (released) return { moreQueued: false, advances: null };
      released = true;
      clearInterval(heartbeat);
      detach();
      try {
        const done = await unlockAndAdvance(db, key, rowId, dispatchIds);
        client.release();
        return done;
      } catch {
        // Could not unlock: destroy the connection, which frees the lock.
        client.release(true);
        return { moreQueued: true, advances: null };
      }
    },
  };
}
