import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryAfterFromHeaders } from "@/domain/retry-after";
import { encodedForms, REDACTED, redact, redactedExcerpt, redactText } from "@/security/redact";

describe("redact", () => {
  const secrets = { TOKEN: "tok-12345", KEY: "sk_live_abcdef", SHORT: "abc" };

  it("replaces every occurrence of a secret inside strings, at any depth, and in keys", () => {
    const value = {
      a: "Bearer tok-12345 and again tok-12345",
      list: [1, true, null, "x sk_live_abcdef y", { deep: ["tok-12345"] }],
      "tok-12345": "key was the secret",
      n: 42,
    };
    expect(redact(value, secrets)).toEqual({
      a: `Bearer ${REDACTED} and again ${REDACTED}`,
      list: [1, true, null, `x ${REDACTED} y`, { deep: [REDACTED] }],
      [REDACTED]: "key was the secret",
      n: 42,
    });
  });

  it("never changes its input, and shares parts that need no change", () => {
    const untouched = { plain: "nothing here", nested: [1, 2, 3] };
    const value = { secret: "tok-12345", untouched };
    const frozen = JSON.stringify(value);
    const out = redact(value, secrets);
    expect(JSON.stringify(value)).toBe(frozen);
    expect(out).not.toBe(value);
    expect(out.untouched).toBe(untouched);
    expect(redact(untouched, secrets)).toBe(untouched);
  });

  it("ignores secrets shorter than 4 characters", () => {
    expect(redactText("abc abcd", secrets)).toBe("abc abcd");
    expect(redactText("abcd", { S: "abcd" })).toBe(REDACTED);
  });

  it("replaces the longest secret where two overlap", () => {
    const nested = { OUTER: "password-1234", INNER: "word" };
    expect(redactText("my password-1234!", nested)).toBe(`my ${REDACTED}!`);
    expect(redactText("a word", nested)).toBe(`a ${REDACTED}`);
  });

  it("treats secret values literally, not as patterns", () => {
    const tricky = { RE: "a.b*(c)?[d]$^|\\/-" };
    expect(redactText("x a.b*(c)?[d]$^|\\/- y", tricky)).toBe(`x ${REDACTED} y`);
    expect(redactText("x aXbbbc y", tricky)).toBe("x aXbbbc y");
  });

  it("catches a secret URL-encoded or JSON-escaped", () => {
    const special = { S: 'p@ss word/"q"' };
    expect(redactText(`https://h/?k=${encodeURIComponent(special.S)}`, special)).toBe(
      `https://h/?k=${REDACTED}`,
    );
    expect(redactText(JSON.stringify({ k: special.S }), special)).toBe(`{"k":"${REDACTED}"}`);
  });

  it("catches a secret URL-encoded twice, form-encoded, or JSON-escaped twice", () => {
    const special = { S: 'p@ss word/"q"\\z' };
    const twiceUrl = encodeURIComponent(encodeURIComponent(special.S));
    expect(redactText(`https://h/?next=${twiceUrl}`, special)).toBe(`https://h/?next=${REDACTED}`);
    const form = new URLSearchParams({ k: special.S }).toString();
    expect(redactText(form, special)).toBe(`k=${REDACTED}`);
    expect(redactText(encodeURI(`https://h/${special.S}`), special)).toBe(`https://h/${REDACTED}`);
    // JSON text inside a JSON string: the secret's quotes and backslashes escaped twice.
    const twiceJson = JSON.stringify(JSON.stringify({ k: special.S }));
    const out = redactText(twiceJson, special);
    expect(out).toBe(
      JSON.stringify(JSON.stringify({ k: "SENTINEL" })).replace("SENTINEL", REDACTED),
    );
    for (const form of encodedForms(special.S)) expect(out).not.toContain(form);
  });

  it("catches a secret inside base64 wherever it starts (a Basic credential echoed back)", () => {
    const record = { S: "hunter2-correct-horse" };
    for (const prefix of ["", "u:", "user:", "a-much-longer-user-name:"]) {
      const basic = Buffer.from(`${prefix}${record.S}`).toString("base64");
      const out = redactText(`Basic ${basic}`, record);
      expect({ prefix, out: out.includes(REDACTED) }).toEqual({ prefix, out: true });
      // What is left cannot be decoded back into the secret, nor into most of it.
      const left = Buffer.from(out.replace(REDACTED, ""), "base64").toString("latin1");
      expect(left).not.toContain(record.S.slice(0, 8));
    }
    const url = Buffer.from(`x${record.S}`).toString("base64url");
    expect(redactText(url, record)).toContain(REDACTED);
  });

  it("an excerpt is redacted before it is cut: no start of a secret survives the cut", () => {
    const record = { S: "0123456789abcdef" };
    for (let at = 0; at < 40; at++) {
      const text = `${"x".repeat(at)}${record.S} tail`;
      const out = redactedExcerpt(text, record, 30);
      expect({ at, leak: out.includes(record.S.slice(0, 3)) }).toEqual({ at, leak: false });
      expect(out.length).toBeLessThanOrEqual(31);
    }
    expect(redactedExcerpt(`a  b\n\n${record.S}`, record, 300)).toBe(`a b ${REDACTED}`);
  });

  it("an excerpt of a text read only in part drops a tail that starts a secret", () => {
    const record = { S: "0123456789abcdef" };
    // Only the first bytes of a body were read: it ends inside the secret.
    expect(redactedExcerpt("error: 012345678", record, 300, { truncated: true })).toBe("error: ");
    expect(redactedExcerpt("error: 012345678", record, 300)).toBe("error: 012345678");
    const encodedStart = encodeURIComponent('p@ss"word-long').slice(0, 7);
    expect(
      redactedExcerpt(`u=${encodedStart}`, { S: 'p@ss"word-long' }, 300, { truncated: true }),
    ).toBe("u=");
  });

  it("a secret containing whitespace is found before whitespace is flattened", () => {
    const record = { PEM: "-----BEGIN KEY-----\nAAAA\n  BBBB\n-----END KEY-----" };
    const out = redactedExcerpt(`leaked:\n${record.PEM}\n`, record, 300);
    expect(out).toBe(`leaked: ${REDACTED}`);
  });

  it("costs nothing without secrets: the same value back", () => {
    const value = { a: ["b", { c: "d" }] };
    expect(redact(value, {})).toBe(value);
    expect(redactText("text", {})).toBe("text");
  });

  it("notices a secrets record that changed since it was last used", () => {
    const record: Record<string, string> = { A: "first-secret" };
    expect(redactText("first-secret second-secret", record)).toBe(`${REDACTED} second-secret`);
    record.B = "second-secret";
    expect(redactText("first-secret second-secret", record)).toBe(`${REDACTED} ${REDACTED}`);
  });

  it("property: no redacted string still contains a secret of 4+ characters", () => {
    fc.assert(
      fc.property(
        // Letters absent from "[redacted]", so a replacement cannot spell a secret anew.
        fc.array(fc.stringMatching(/^[bfghxyz]{4,10}$/), { minLength: 1, maxLength: 4 }),
        fc.array(fc.stringMatching(/^[bfghxyz ]{0,12}$/), { maxLength: 6 }),
        (values, fillers) => {
          const record = Object.fromEntries(values.map((v, i) => [`S${i}`, v]));
          const text = fillers.map((f, i) => f + (values[i % values.length] ?? "")).join("");
          const out = redactText(text, record);
          for (const v of values) expect(out).not.toContain(v);
        },
      ),
    );
  });
});

describe("Retry-After", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");

  it("delay-seconds and HTTP dates, capped at 5 minutes, never negative", () => {
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("1.5", now)).toBe(1500);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("86400", now)).toBe(300_000);
  });

  it("ignores what it cannot read", () => {
    for (const v of [null, undefined, "", "soon", "-5", "1e3"]) {
      expect(parseRetryAfter(v, now)).toBeUndefined();
    }
  });

  it("retry-after-ms wins over retry-after", () => {
    expect(
      retryAfterFromHeaders(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now),
    ).toBe(250);
    expect(retryAfterFromHeaders(new Headers({ "retry-after": "9" }), now)).toBe(9000);
    expect(retryAfterFromHeaders(undefined, now)).toBeUndefined();
  });
});
