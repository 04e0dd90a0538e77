/**
 * The server key that seals stored secrets (webhook and workspace secrets). Invariants:
 * the embedded default keeps one key per data folder and never replaces a damaged one;
 * a process joining a running server uses that server's key or refuses, told apart by a
 * fingerprint that reveals nothing of the key.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { readEnv } from "@/config/env";
import { decodeSecretKey, generateSecretKey } from "./secret-box";

/** The server key sealing stored secrets, from CELLFLOW_SECRET_KEY; null when unset. */
export function serverSecretKey(): Buffer | null {
  const text = readEnv().CELLFLOW_SECRET_KEY;
  // readEnv has refused a malformed value already, so null here means "unset".
  return text ? decodeSecretKey(text) : null;
}

const SECRET_KEY_FILE = "secret-key";

export interface EnsuredSecretKey {
  key: string;
  source: "env" | "file" | "generated";
}

/**
 * For the embedded default: CELLFLOW_SECRET_KEY when set; else the key kept in
 * `<dataDir>/secret-key`; else a new one written there (mode 0600). Losing this key makes
 * every stored webhook secret unreadable, so a damaged file stops the start instead of
 * being silently replaced.
 */
export function ensureSecretKey(dataDir: string, envKey: string | undefined): EnsuredSecretKey {
  const found = findSecretKey(dataDir, envKey);
  if (found) return found;
  const key = generateSecretKey();
  const file = path.join(dataDir, SECRET_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  return { key, source: "generated" };
}

/**
 * The key ensureSecretKey would use, without making one: CELLFLOW_SECRET_KEY, else the
 * data folder's file, else undefined. A damaged file throws, as it does for the server.
 */
export function findSecretKey(
  dataDir: string,
  envKey: string | undefined,
): EnsuredSecretKey | undefined {
  if (envKey) return { key: envKey, source: "env" };
  const file = path.join(dataDir, SECRET_KEY_FILE);
  if (!fs.existsSync(file)) return undefined;
  const key = fs.readFileSync(file, "utf8").trim();
  if (!decodeSecretKey(key)) {
    throw new Error(
      `${file} does not hold a 32-byte key (64 hex characters or base64); restore it, or delete it to start over (existing webhooks then stop verifying)`,
    );
  }
  return { key, source: "file" };
}

/**
 * A short fingerprint of a key, for telling two processes' keys apart: 64 bits of a
 * domain-separated SHA-256 of the key's bytes (its hex and base64 forms agree). It says
 * nothing useful about a 256-bit random key.
 */
export function secretKeyId(key: string): string {
  const bytes = decodeSecretKey(key) ?? Buffer.from(key, "utf8");
  return createHash("sha256")
    .update("cellflow secret key id\0")
    .update(bytes)
    .digest("hex")
    .slice(0, 16);
}
