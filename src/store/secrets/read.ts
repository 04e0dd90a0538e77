/**
 * Reading workspace secrets. Invariant: plaintext leaves this module only through
 * `loadSecrets` (for running workflows); listings carry names and times, never values,
 * and nothing here logs a value.
 */

import type { Db } from "@db/client";
import { secrets } from "@db/schema";
import { asc, eq } from "drizzle-orm";
import { type Logger, log as processLog } from "@/config/log";
import { openSecret } from "@/security/secret-box";
import { serverSecretKey } from "@/security/secret-key";

export interface SecretRecord {
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A workspace's secrets by name, without their values. */
export async function listSecrets(db: Db, workspaceId: string): Promise<SecretRecord[]> {
  return db
    .select({ name: secrets.name, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt })
    .from(secrets)
    .where(eq(secrets.workspaceId, workspaceId))
    .orderBy(asc(secrets.name));
}

/**
 * Every secret of a workspace, decrypted, by name. A secret that does not open (the server
 * key changed or is unset, the row was altered) is left out with a warning naming it, so
 * the workflows that do not use it still run and the ones that do fail on its absence.
 */
export async function loadSecrets(
  db: Db,
  workspaceId: string,
  log: Pick<Logger, "warn"> = processLog(),
): Promise<Record<string, string>> {
  const rows = await db
    .select({ name: secrets.name, ciphertext: secrets.ciphertext })
    .from(secrets)
    .where(eq(secrets.workspaceId, workspaceId));
  const out: Record<string, string> = {};
  if (rows.length === 0) return out;
  const key = serverSecretKey();
  for (const row of rows) {
    const opened = key ? openSecret(key, row.ciphertext) : null;
    if (opened?.ok) {
      out[row.name] = opened.value;
      continue;
    }
    log.warn(
      { workspaceId, secretName: row.name, reason: opened ? opened.reason : "no_server_key" },
      key
        ? "a workspace secret cannot be decrypted (was CELLFLOW_SECRET_KEY changed?); it is left out"
        : "CELLFLOW_SECRET_KEY is not set: workspace secrets cannot be decrypted; they are left out",
    );
  }
  return out;
}
