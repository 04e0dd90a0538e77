import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { closeDatabase, getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { inject } from "vitest";
import { waitFor } from "./processes";

/** The database `useTestDatabase` made for this file, if it made one (read by file-hooks.ts). */
let fileDatabaseUrl: string | null = null;
export const testDatabaseUrl = (): string | null => fileDatabaseUrl;

/**
 * A database of this test file's own, cloned from the migrated template, and wired as the
 * process database (getDatabase), so route handlers under test use it.
 */
export async function useTestDatabase(): Promise<{ url: string; adminUrl: string; name: string }> {
  const adminUrl = inject("pgAdminUrl");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name} template cellflow_template`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await closeDatabase();
  // The neon lane: getDatabase() here and spawned workers (which inherit this env) go
  // through the WebSocket proxy. The admin connections above stay on node-postgres.
  const neonWsProxy = inject("neonWsProxy");
  if (neonWsProxy) {
    process.env.DATABASE_DRIVER = "neon";
    process.env.NEON_WS_PROXY = neonWsProxy;
  }
  process.env.DATABASE_URL = url.toString();
  getDatabase();
  fileDatabaseUrl = url.toString();
  return { url: url.toString(), adminUrl, name };
}

/**
 * Waits (10 s at most) until some session of the file's database waits for a lock: a
 * race test's way to know the statement it started is held where it meant to hold it.
 */
export async function someoneWaitsForALock(): Promise<boolean> {
  return waitFor(async () => {
    const [w] = await queryRows<{ n: number }>(
      getDatabase().db,
      sql`select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return (w?.n ?? 0) > 0;
  }, 10_000);
}
