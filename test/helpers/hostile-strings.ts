/** The hostile strings every string field of the API is tried with, and what the contract allows of each. */
import jsonata from "jsonata";

export const MIB = 1024 * 1024;

/** About fifty strings that have broken parsers, queries, encoders and spreadsheets. */
export const HOSTILE: Record<string, string> = {
  "SQL injection": "'; drop table rows; --",
  "SQL double quote": '"; drop table tables; --',
  "SQL comment": "/* */ or 1=1 --",
  "LIKE percent": "%",
  "LIKE underscore": "_",
  "LIKE both": "%_%\\%\\_",
  backslash: "\\",
  "escaped-looking text": "\\u0000 \\n \\x00",
  "positional parameter": "$1",
  "dollar quoting": "$$; select pg_sleep(1); $$",
  "tagged dollar quoting": "$tag$x$tag$",
  "NUL inside": "a\u0000b",
  "NUL alone": "\u0000",
  "lone high surrogate": "\ud800",
  "lone low surrogate": "x\udc00y",
  "reversed surrogate pair": "\udc00\ud800",
  "right-to-left override": "\u202Egnp.exe\u202C",
  Arabic: "مرحبا بالعالم",
  Hebrew: "שלום",
  "zero-width characters": "a\u200Bb\u200Cc\u200Dd\u2060e",
  "byte order mark inside": "a\uFEFFb",
  "byte order mark first": "\uFEFFstart",
  "combining marks": "e\u0301\u0301\u0301\u0301",
  "decomposed é (NFD)": "cafe\u0301",
  "composed é (NFC)": "caf\u00e9",
  emoji: "😀",
  "emoji ZWJ family": "👨‍👩‍👧‍👦",
  "flag emoji": "🇫🇷",
  "astral letters": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "private use": "\uE000\uF8FF",
  noncharacters: "\uFFFE\uFFFF",
  "replacement character": "\uFFFD",
  "line feed": "a\nb",
  CRLF: "a\r\nb",
  "carriage return": "a\rb",
  "control characters": "\u0001\u0007\u001b[31mred",
  "DEL and C1 controls": "\u007f\u0085\u009b",
  "line and paragraph separators": "a\u2028b\u2029c",
  "surrounding spaces": "  padded  ",
  "non-breaking space only": "\u00a0",
  "spaces only": "   ",
  empty: "",
  HTML: "<script>alert(1)</script>",
  "JSON-looking text": '{"__proto__":{"admin":true}}',
  "CSV-looking text": '"a","b"\r\n=1',
  template: "{{ secrets.LLM_API_KEY }}",
  // Computed: a literal `__proto__:` key would set the object's prototype instead.
  ["__proto__"]: "__proto__",
  constructor: "constructor",
  "formula =": '=HYPERLINK("http://x.test","y")',
  "formula @": "@SUM(A1:A9)",
  "10,000 characters": "x".repeat(10_000),
  "100,000 characters (the text limit)": "y".repeat(100_000),
  "100,001 characters": "z".repeat(100_001),
  "1,000,000 characters (under the body limit)": "v".repeat(1_000_000),
  "1 MiB (over the body limit)": "w".repeat(MIB),
};

export const entries = Object.entries(HOSTILE);
if (entries.length !== 55 || !Object.hasOwn(HOSTILE, "__proto__"))
  throw new Error("the hostile strings were not all listed");

/** A URL cannot carry an unpaired surrogate: the client sends U+FFFD for it. */
export const inUrl = (s: string) => encodeURIComponent(s.toWellFormed());
export const storable = (s: string) => !s.includes("\u0000") && s.isWellFormed();
export const bytes = (s: string) => Buffer.byteLength(s, "utf8");
/** What `Name` accepts: kept exactly, so no white space at either end. */
export const nameOk = (s: string) =>
  storable(s) && s.length >= 1 && s.length <= 200 && s.trim() === s && s !== "";
export const textOk = (s: string) => storable(s) && s.length <= 100_000;
export const clientIdOk = (s: string) => /^[a-z][a-z0-9_]{0,62}$/.test(s) && s !== "constructor";
/** Expressions are checked for JSONata syntax when a workflow is saved. */
export const parses = (s: string) => {
  try {
    jsonata(s);
    return true;
  } catch {
    return false;
  }
};

/** JSON bodies over 1 MiB are a 413, whatever they hold. */
export const overLimit = (body: unknown) => bytes(JSON.stringify(body)) > MIB;
