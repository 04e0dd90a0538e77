/**
 * Databases for the harnesses (bench, chaos, load) and the test suite's template: one way
 * to make a fresh database, so every harness runs against the schema the migrations make.
 * Free of vitest, so the scripts that run outside it can import it.
 */
import { createDatabase, type Database } from "@db/client";
import { ensureDatabase } from "@db/embedded";
import { runMigrations } from "@db/migrate";

/** Database `name` on the server at `adminUrl`, created if absent and migrated; its URL. */
export async function migratedDatabase(adminUrl: string, name: string): Promise<string> {
  const url = await ensureDatabase(adminUrl, name);
  await runMigrations(url);
  return url;
}

/** `migratedDatabase` and a pool on it. */
export async function freshDatabase(
  adminUrl: string,
  name: string,
  pool: { poolMax?: number; applicationName?: string } = {},
): Promise<{ url: string; database: Database }> {
  const url = await migratedDatabase(adminUrl, name);
  return { url, database: createDatabase({ url, ...pool }) };
}
