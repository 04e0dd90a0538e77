import fs from "node:fs";
import path from "node:path";
import { readEnv } from "../config/env";
import { decodeSecretKey, generateSecretKey } from "./secret-box";

/** The server key sealing stored secrets, from CELLFLOW_SECRET_KEY; null when unset. */
export function serverSecretKey(): Buffer | null {
  const text = readEnv().CELLFLOW_SECRET_KEY;
  // readEnv has refused a malformed value already, so null here means "unset".
  return text ? decodeSecretKey(text) : null;
}

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
  if (envKey) return { key: envKey, source: "env" };
  const file = path.join(dataDir, "secret-key");
  if (fs.existsSync(file)) {
    const key = fs.readFileSync(file, "utf8").trim();
    if (!decodeSecretKey(key)) {
      throw new Error(
        `${file} does not hold a 32-byte key (64 hex characters or base64); restore it, or delete it to start over (existing webhooks then stop verifying)`,
      );
    }
    return { key, source: "file" };
  }
  const key = generateSecretKey();
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  return { key, source: "generated" };
}
