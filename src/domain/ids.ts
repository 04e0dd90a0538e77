import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function encode(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

function timePart(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/**
 * `<prefix>_<10 time chars><16 random chars>`: sorts by creation time, so new rows land
 * at the right edge of their b-tree indexes, and 80 random bits make collisions moot.
 */
export function newId(prefix: string): string {
  return `${prefix}_${timePart(Date.now())}${encode(randomBytes(16))}`;
}
