/**
 * What a first start shows while `next build` runs: its phase lines, shortened, and the
 * elapsed time, as one line rewritten in place on a terminal and as plain lines elsewhere
 * (one per phase, one per quiet stretch), ending with how long the build took. Fed with
 * next build's own output as 16.x prints it, without running a build.
 */
import { describe, expect, it } from "vitest";
import { BuildProgress, buildPhase, LineSplitter, QUIET_MS } from "@/server/build-progress";

/** `next build` stdout (Next.js 16.4, Turbopack), chunked as it arrived, \r redraws included. */
const NEXT_BUILD_OUTPUT = [
  "▲ Next.js 16.4.6 (Turbopack)\n\n",
  "✓ Running next.config.ts took 65ms\n\n\n\n",
  "  Creating an optimized production build ...\n\n",
  "✓ Compiled successfully in 35.4s\n\n  Skipping validation of types\n\n",
  "  Finished TypeScript config validation in 26ms ...\n\n  Collecting page data using 1 worker ...\n\n",
  "  Generating static pages using 1 worker (0/13) ...\n  Generating static pages using 1 worker (3/13) \r",
  "  Generating static pages using 1 worker (6/13) \r  Generating static pages using 1 worker (9/13) \r",
  "✓ Generating static pages using 1 worker (13/13) in 546ms\n  Finalizing page optimization ...\n\n",
  "Route (app)\n┌ ○ /\n├ ƒ /api/[...path]\n└ ƒ /workflows/[id]\n\n○  (Static)   prerendered as static content\n",
];

class Screen {
  written = "";
  constructor(readonly isTTY: boolean) {}
  write(text: string) {
    this.written += text;
  }
}

/** Feeds the output with `next build`'s timing: compile ends at 35 s, the rest by 41 s. */
function replay(progress: BuildProgress, clock: { t: number }): void {
  const lines = new LineSplitter();
  const at = [0, 0, 1_000, 36_000, 36_000, 40_000, 40_400, 41_000, 41_000];
  NEXT_BUILD_OUTPUT.forEach((chunk, i) => {
    const next = at[i] ?? clock.t;
    // The ticker runs once a second in between.
    while (clock.t + 1_000 <= next) {
      clock.t += 1_000;
      progress.tick();
    }
    clock.t = next;
    for (const line of lines.push(chunk)) progress.line(line);
  });
  for (const line of lines.end()) progress.line(line);
}

describe("next build's phase lines", () => {
  it("each phase line is named in a few words; every other line is not relayed", () => {
    const phases = NEXT_BUILD_OUTPUT.join("")
      .split(/\r\n|\r|\n/)
      .map((line) => buildPhase(line))
      .filter((p) => p !== undefined);
    expect(phases).toEqual([
      { text: "compiling", ongoing: true },
      { text: "compiled in 35.4s", ongoing: false },
      { text: "collecting page data", ongoing: true },
      { text: "generating static pages (0/13)", ongoing: true },
      { text: "generating static pages (3/13)", ongoing: true },
      { text: "generating static pages (6/13)", ongoing: true },
      { text: "generating static pages (9/13)", ongoing: true },
      { text: "generated static pages (13/13) in 546ms", ongoing: false },
      { text: "finalizing", ongoing: true },
    ]);
  });

  it("colour codes, other markers and older builders' phases are understood too", () => {
    expect(buildPhase("\u001b[32m✓\u001b[39m Compiled successfully")).toEqual({
      text: "compiled",
      ongoing: false,
    });
    expect(buildPhase("   \u001b[1mCollecting build traces\u001b[22m ...")).toEqual({
      text: "collecting build traces",
      ongoing: true,
    });
    expect(buildPhase("  Linting and checking validity of types ...")?.text).toBe("checking types");
    expect(buildPhase("⨯ Failed to compile.")?.text).toBe("failed to compile");
    expect(buildPhase("Route (app)")).toBeUndefined();
    expect(buildPhase("")).toBeUndefined();
  });

  it("a line cut across chunks is one line, and \\r ends a line as \\n does", () => {
    const lines = new LineSplitter();
    expect(lines.push("  Collecting pa")).toEqual([]);
    expect(lines.push("ge data ...\n  Generating (1/2) \r  Gen")).toEqual([
      "  Collecting page data ...",
      "  Generating (1/2) ",
    ]);
    expect(lines.push("erating (2/2)\r\n")).toEqual(["  Generating (2/2)"]);
    expect(lines.push("tail")).toEqual([]);
    expect(lines.end()).toEqual(["tail"]);
    expect(lines.end()).toEqual([]);
  });
});

describe("the progress shown", () => {
  it("off a terminal: one line per phase (not per page counted), one per quiet stretch, then the total", () => {
    const clock = { t: 0 };
    const out = new Screen(false);
    const progress = new BuildProgress(out, "[cellflow] ", () => clock.t);
    replay(progress, clock);
    progress.finish();
    expect(QUIET_MS).toBe(15_000);
    expect(out.written.split("\n")).toEqual([
      "[cellflow] build: compiling… 1 s",
      "[cellflow] build: compiling… 16 s",
      "[cellflow] build: compiling… 31 s",
      "[cellflow] build: 36 s (compiled in 35.4s)",
      "[cellflow] build: collecting page data… 36 s",
      "[cellflow] build: generating static pages (0/13)… 40 s",
      "[cellflow] build: 41 s (generated static pages (13/13) in 546ms)",
      "[cellflow] build: finalizing… 41 s",
      "[cellflow] web app built in 41 s",
      "",
    ]);
    expect(out.written).not.toContain("\r");
  });

  it("on a terminal: one status line rewritten in place every second, replaced by the total", () => {
    const clock = { t: 0 };
    const out = new Screen(true);
    const progress = new BuildProgress(out, "[cellflow] ", () => clock.t);
    replay(progress, clock);
    // Until the end nothing scrolls: no newline, each draw erases the line and returns.
    expect(out.written).not.toContain("\n");
    const draws = out.written.split("\r").filter(Boolean);
    expect(draws.length).toBeGreaterThanOrEqual(41);
    for (const draw of draws)
      expect(draw.startsWith("\u001b[2K[cellflow] building the web app: ")).toBe(true);
    expect(draws).toContain("\u001b[2K[cellflow] building the web app: compiling… 12 s");
    expect(draws.at(-1)).toBe("\u001b[2K[cellflow] building the web app: finalizing… 41 s");
    clock.t = 42_000;
    progress.finish();
    expect(out.written.endsWith("\r\u001b[2K[cellflow] web app built in 42 s\n")).toBe(true);
  });

  it("a failed build clears the status line, so the error starts on a clean one", () => {
    const out = new Screen(true);
    const progress = new BuildProgress(out, "[cellflow] ", () => 5_000);
    progress.tick();
    progress.abandon();
    expect(out.written).toBe("\u001b[2K[cellflow] building the web app: starting… 0 s\r\u001b[2K");
    const plain = new Screen(false);
    new BuildProgress(plain).abandon();
    expect(plain.written).toBe("");
  });
});
