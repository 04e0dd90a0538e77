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

/**
 * The characters a usable key may hold: what `Authorization: Bearer` accepts. They are
 * all legal in a cookie value too, so a key of this shape can be set as one verbatim.
 */
const KEY_SHAPE = /^[A-Za-z0-9_\-.~+/=]{1,512}$/;

export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}
