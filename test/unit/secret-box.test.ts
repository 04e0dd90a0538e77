import { createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { decodeSecretKey, generateSecretKey, openSecret, sealSecret } from "@/security/secret-box";
import { ensureSecretKey, findSecretKey, secretKeyId } from "@/security/secret-key";
import {
  deliveryDigest,
  isFresh,
  parseSignatureHeader,
  signatureMatches,
} from "@/security/signature";

const key = randomBytes(32);

describe("secret box", () => {
  it("a sealed secret opens to the same text, and the sealed form does not contain it", () => {
    const secret = `whsec_${randomBytes(32).toString("base64url")} ünïcode`;
    const sealed = sealSecret(key, secret);
    expect(sealed).toMatch(/^[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(openSecret(key, sealed)).toEqual({ ok: true, value: secret });
    // A fresh IV each time: equal secrets do not give equal ciphertexts.
    expect(sealSecret(key, secret)).not.toBe(sealed);
  });

  it("any changed part of the ciphertext is detected, never opened to other text", () => {
    const sealed = sealSecret(key, "the secret");
    const parts = sealed.split(".");
    for (let i = 0; i < 3; i++) {
      const bytes = Buffer.from(parts[i] as string, "base64");
      bytes[0] = (bytes[0] ?? 0) ^ 1;
      const tampered = parts.map((p, j) => (j === i ? bytes.toString("base64") : p)).join(".");
      expect(openSecret(key, tampered).ok, `part ${i}`).toBe(false);
    }
  });

  it("another key cannot open it", () => {
    expect(openSecret(randomBytes(32), sealSecret(key, "the secret"))).toEqual({
      ok: false,
      reason: "unauthentic",
    });
  });

  it("malformed stored text is a typed failure, not a throw", () => {
    for (const bad of ["", "a.b", "a.b.c.d", "!!.??.**", `${"A".repeat(16)}.${"A".repeat(24)}.`]) {
      expect(openSecret(key, bad)).toEqual({ ok: false, reason: "malformed" });
    }
  });

  it("server keys are 32 bytes, as hex or base64; anything else is refused", () => {
    const raw = randomBytes(32);
    expect(decodeSecretKey(raw.toString("hex"))).toEqual(raw);
    expect(decodeSecretKey(raw.toString("base64"))).toEqual(raw);
    expect(decodeSecretKey(raw.toString("base64url"))).toEqual(raw);
    expect(decodeSecretKey(generateSecretKey())?.length).toBe(32);
    for (const bad of [
      "",
      "short",
      randomBytes(16).toString("hex"),
      randomBytes(48).toString("base64"),
    ])
      expect(decodeSecretKey(bad)).toBeNull();
  });

  it("CELLFLOW_SECRET_KEY of the wrong form stops start-up with a message naming it", () => {
    expect(() => readEnv({ CELLFLOW_SECRET_KEY: "not-a-key" })).toThrow(/CELLFLOW_SECRET_KEY/);
    expect(readEnv({ CELLFLOW_SECRET_KEY: "" }).CELLFLOW_SECRET_KEY).toBeUndefined();
    const hex = randomBytes(32).toString("hex");
    expect(readEnv({ CELLFLOW_SECRET_KEY: hex }).CELLFLOW_SECRET_KEY).toBe(hex);
  });
});

describe("the embedded default's secret key", () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-key-"));

  it("is generated once, kept private (0600) in the data dir, and the same on every start", () => {
    const dir = tmp();
    const first = ensureSecretKey(dir, undefined);
    expect(first.source).toBe("generated");
    expect(decodeSecretKey(first.key)).not.toBeNull();
    expect(fs.statSync(path.join(dir, "secret-key")).mode & 0o777).toBe(0o600);
    expect(ensureSecretKey(dir, undefined)).toEqual({ key: first.key, source: "file" });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the variable wins over the file, and a damaged file is an error, never replaced", () => {
    const dir = tmp();
    expect(ensureSecretKey(dir, "from-env")).toEqual({ key: "from-env", source: "env" });
    expect(fs.existsSync(path.join(dir, "secret-key"))).toBe(false);
    fs.writeFileSync(path.join(dir, "secret-key"), "garbage\n");
    expect(() => ensureSecretKey(dir, undefined)).toThrow(/secret-key/);
    expect(fs.readFileSync(path.join(dir, "secret-key"), "utf8")).toBe("garbage\n");
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("a joining process's view of the secret key", () => {
  it("finding the key never makes one, and reads the same key the server ensured", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-key-"));
    expect(findSecretKey(dir, undefined)).toBeUndefined();
    expect(fs.readdirSync(dir)).toEqual([]);
    const ensured = ensureSecretKey(dir, undefined);
    expect(findSecretKey(dir, undefined)).toEqual({ key: ensured.key, source: "file" });
    expect(findSecretKey(dir, "from-env")).toEqual({ key: "from-env", source: "env" });
    fs.writeFileSync(path.join(dir, "secret-key"), "garbage\n");
    expect(() => findSecretKey(dir, undefined)).toThrow(/secret-key/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the key id tells keys apart, is the same for a key's hex and base64 forms, and shows neither", () => {
    const a = generateSecretKey();
    const b = generateSecretKey();
    const aHex = Buffer.from(a, "base64").toString("hex");
    expect(secretKeyId(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(secretKeyId(a)).toBe(secretKeyId(aHex));
    expect(secretKeyId(a)).not.toBe(secretKeyId(b));
    expect(aHex).not.toContain(secretKeyId(a));
  });
});

describe("webhook signatures", () => {
  const secret = "whsec_test";
  const body = Buffer.from('{"rows":[]}');
  const hex = (t: string, b: Uint8Array = body) =>
    createHmac("sha256", secret)
      .update(Buffer.concat([Buffer.from(`${t}.`), b]))
      .digest("hex");

  it("a header made as API.md describes verifies; any other secret or body does not", () => {
    const sig = parseSignatureHeader(`t=1700000000,v1=${hex("1700000000")}`);
    if (!sig) throw new Error("did not parse");
    expect(signatureMatches(secret, sig, body)).toBe(true);
    expect(signatureMatches("whsec_other", sig, body)).toBe(false);
    expect(signatureMatches(secret, sig, Buffer.from('{"rows":[ ]}'))).toBe(false);
    // Upper-case hex and extra schemes (signing with a second secret) still verify.
    const more = parseSignatureHeader(
      `t=1700000000, v0=zz, v1=${"0".repeat(64)}, v1=${hex("1700000000").toUpperCase()}`,
    );
    expect(more && signatureMatches(secret, more, body)).toBe(true);
  });

  it("malformed headers do not parse", () => {
    const v1 = hex("1");
    for (const bad of [
      null,
      "",
      "garbage",
      `v1=${v1}`,
      "t=1",
      `t=abc,v1=${v1}`,
      `t=1,t=2,v1=${v1}`,
      "t=1,v1=xyz",
      `t=1,v1=${v1.slice(2)}`,
      `t=1;v1=${v1}`,
      `t=1,v1=${v1},${"x".repeat(3000)}=1`,
    ])
      expect(parseSignatureHeader(bad), String(bad)).toBeNull();
  });

  it("t is fresh within 300 s either way", () => {
    const at = (t: number) => parseSignatureHeader(`t=${t},v1=${"0".repeat(64)}`);
    const now = 1_700_000_000_000;
    const check = (t: number) => {
      const sig = at(t);
      return sig !== null && isFresh(sig, now);
    };
    expect([check(1_700_000_000 - 300), check(1_700_000_000 + 300)]).toEqual([true, true]);
    expect([check(1_700_000_000 - 301), check(1_700_000_000 + 301)]).toEqual([false, false]);
  });

  it("a delivery is identified by its t and exact body bytes", () => {
    expect(deliveryDigest("1", body)).toBe(deliveryDigest("1", Buffer.from(body)));
    expect(deliveryDigest("2", body)).not.toBe(deliveryDigest("1", body));
    expect(deliveryDigest("1", Buffer.from('{"rows": []}'))).not.toBe(deliveryDigest("1", body));
  });
});
