import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Result } from "@/domain/result";

/**
 * Secrets we must be able to read back (webhook signing secrets) are sealed with
 * AES-256-GCM under the server key. Stored as "iv.tag.data", each part base64. GCM
 * authenticates as well as encrypts: a changed byte or another key fails to open instead
 * of yielding garbage that would then be trusted as a secret.
 */

export const SECRET_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type OpenFailure = "malformed" | "unauthentic";

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The server key from its text form: 64 hex characters or base64 (standard or url-safe)
 * of exactly 32 bytes; null for anything else. Hex is tried first because 64 hex
 * characters are also valid base64, of the wrong length.
 */
export function decodeSecretKey(text: string): Buffer | null {
  const s = text.trim();
  if (HEX_KEY.test(s)) return Buffer.from(s, "hex");
  if (!BASE64_KEY.test(s)) return null;
  const key = Buffer.from(s, "base64");
  return key.length === SECRET_KEY_BYTES ? key : null;
}

/** A new server key in the text form `decodeSecretKey` reads (base64). */
export function generateSecretKey(): string {
  return randomBytes(SECRET_KEY_BYTES).toString("base64");
}

export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64")).join(".");
}

export function openSecret(key: Buffer, sealed: string): Result<string, OpenFailure> {
  const parts = sealed.split(".");
  if (parts.length !== 3) return { ok: false, reason: "malformed" };
  const [iv, tag, data] = parts.map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES || key.length !== SECRET_KEY_BYTES)
    return { ok: false, reason: "malformed" };
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(data), decipher.final()]);
    return { ok: true, value: plain.toString("utf8") };
  } catch {
    // final() throws when the tag does not verify: wrong key or altered ciphertext.
    return { ok: false, reason: "unauthentic" };
  }
}
