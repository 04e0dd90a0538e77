import { createHash, randomBytes } from "node:crypto";

/** Keys look like `cf_<43 base64url chars>`; only their SHA-256 is stored. */
export function generateApiKey(): string {
  return `cf_${randomBytes(32).toString("base64url")}`;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function keyPrefix(key: string): string {
  return key.slice(0, 11);
}
