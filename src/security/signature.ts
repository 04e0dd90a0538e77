import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * `Cellflow-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * Several v1 entries are accepted (any may match) and other schemes are ignored, so a
 * sender can sign with two secrets or a newer scheme while receivers catch up.
 */

export const SIGNATURE_HEADER = "cellflow-signature";
/** How far `t` may be from the server clock, either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface ParsedSignature {
  /** `t` exactly as sent: it is part of the signed text. */
  t: string;
  seconds: number;
  v1: Buffer[];
}

const MAX_HEADER = 2_048;

export function parseSignatureHeader(header: string | null): ParsedSignature | null {
  if (!header || header.length > MAX_HEADER) return null;
  let t: string | undefined;
  const v1: Buffer[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) return null;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === "t") {
      if (t !== undefined || !/^\d{1,12}$/.test(value)) return null;
      t = value;
    } else if (name === "v1") {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) return null;
      v1.push(Buffer.from(value, "hex"));
    }
  }
  if (t === undefined || v1.length === 0) return null;
  return { t, seconds: Number(t), v1 };
}

export function isFresh(sig: ParsedSignature, nowMs: number): boolean {
  return Math.abs(nowMs / 1000 - sig.seconds) <= SIGNATURE_TOLERANCE_SECONDS;
}

function signedPayload(t: string, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${t}.`, "utf8"), body]);
}

export function signatureFor(secret: string, t: string, body: Uint8Array): Buffer {
  return createHmac("sha256", secret).update(signedPayload(t, body)).digest();
}

/** Constant-time: every candidate is compared in full, whichever matches. */
export function signatureMatches(secret: string, sig: ParsedSignature, body: Uint8Array): boolean {
  const expected = signatureFor(secret, sig.t, body);
  let match = false;
  for (const given of sig.v1) {
    if (given.length === expected.length && timingSafeEqual(given, expected)) match = true;
  }
  return match;
}

/**
 * What identifies a delivery for replay protection: the signed text, not the header, so
 * the same request re-sent with the hex in another case is still the same delivery.
 */
export function deliveryDigest(t: string, body: Uint8Array): string {
  return createHash("sha256").update(signedPayload(t, body)).digest("hex");
}
