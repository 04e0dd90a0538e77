/**
 * The engine's process-wide pieces live in its handle (src/engine/handle.ts), built at the
 * composition root: no module of src/engine, src/events or src/limits keeps mutable state
 * of its own at the top level (a `let`, a `new Map`/`Set`/`WeakMap`/`Lru`, a holder on
 * globalThis), outside the few listed below, each with the reason it must be one per
 * process rather than one per handle. The scan works on the source text, line by line:
 * a top-level statement starts at column 0 (Biome formats every file).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");
const SCANNED = ["src/engine", "src/events", "src/limits"];

/** file → why it keeps state outside any handle. */
const ALLOWED: Record<string, string> = {
  "src/engine/cancellation.ts":
    "the running attempts and the cancels that came early, on globalThis: Next.js may load a second copy of the module for the API routes, and a Stop issued there must abort the attempts of the carriers in the same process",
  "src/engine/process-wakers.ts":
    "the background loops' wake-up calls (the run-cancel drainers, the covered-cell rewriters), on globalThis: a Stop issued by an API route (a second copy of a module) wakes the loop the server's worker started",
  "src/events/instance.ts":
    "the web process's event hub and feeds, on globalThis: every API route's stream shares one LISTEN session and one reader per table, whichever copy of the module serves it",
  "src/limits/plans.ts":
    "a memo of the validated environment, keyed by the override variables it reads: it cannot go stale, and planLimits is asked by requests where no handle is",
};

/** Lines that keep mutable state at the top level of a module. */
const STATE = [
  /^(export\s+)?(let|var)\s/,
  /^(export\s+)?const\s+\w+\s*(:[^=]+)?=\s*new\s+(Map|Set|WeakMap|WeakSet|WeakRef|Lru|Array)\b/,
  /^(export\s+)?const\s+\w+\s*(:[^=]+)?=\s*(\[\]|\{\})\s*(as\s+[^;]+)?;/,
  /globalThis/,
];

/** The lines of `source` that keep module-level mutable state, as "line: text". */
function moduleState(source: string): string[] {
  const found: string[] = [];
  source.split("\n").forEach((line, i) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
    if (STATE.some((re) => re.test(line))) found.push(`${i + 1}: ${line.trim()}`);
  });
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe("module-level mutable state", () => {
  it("finds each kind of holder in a sample source, and nothing in its functions or comments", () => {
    const sample = [
      "// let x = 1 in a comment is not state",
      "let counter = 0;",
      "export let last: string | undefined;",
      "const seen = new Map<string, number>();",
      "const byPool = new WeakMap<object, number>();",
      "const names: string[] = [];",
      "const cache = new Lru<string>();",
      "const holder = globalThis as { __x?: number };",
      "const LIMIT = 1_000;",
      "const encoder = new TextEncoder();",
      "export function f(): void {",
      "  let local = 0;",
      "  const m = new Map();",
      "}",
    ].join("\n");
    expect(moduleState(sample)).toEqual([
      "2: let counter = 0;",
      "3: export let last: string | undefined;",
      "4: const seen = new Map<string, number>();",
      "5: const byPool = new WeakMap<object, number>();",
      "6: const names: string[] = [];",
      "7: const cache = new Lru<string>();",
      "8: const holder = globalThis as { __x?: number };",
    ]);
  });

  it("is kept only by the allowed modules of the engine, the events and the limits", () => {
    const files = SCANNED.flatMap(sources);
    expect(files.length).toBeGreaterThan(20);
    const offenders = files
      .filter((file) => !(file in ALLOWED))
      .flatMap((file) =>
        moduleState(readFileSync(join(ROOT, file), "utf8")).map((hit) => `${file}:${hit}`),
      );
    expect(offenders).toEqual([]);
  });

  it("lists no module that has no such state any more", () => {
    const stale = Object.keys(ALLOWED).filter(
      (file) => moduleState(readFileSync(join(ROOT, file), "utf8")).length === 0,
    );
    expect(stale).toEqual([]);
  });
});
