import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryAfterFromHeaders } from "../../src/domain/retry-after";
import { REDACTED, redact, redactText } from "../../src/security/redact";

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
