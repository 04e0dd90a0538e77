/**
 * What a person sees while `next build` runs on a first start, which is silent for tens
 * of seconds otherwise. Invariants: the elapsed time is always in view: on a terminal one
 * status line rewritten in place every second (never a scroll of them); elsewhere (a pipe,
 * a log file) one plain line per phase of the build and one every QUIET_MS while a phase
 * goes on; it ends with one line saying how long the build took. Only next build's phase
 * lines are relayed, shortened; its full output is kept by the caller for a failure.
 */

/** A writable that may be a terminal (process.stdout). */
export interface ProgressOut {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface BuildPhase {
  /** A few lower-case words, e.g. "collecting page data" or "compiled in 35.4s". */
  text: string;
  /** Under way (a state that lasts), as opposed to a phase that just ended. */
  ongoing: boolean;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour sequences start with ESC.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** Next's status markers (✓ ⚠ ⨯ ▲ ○ ƒ) and spaces before the words. */
const MARKERS = /^[\s✓⚠⨯▲○ƒ✔×]+/u;

const PHASES: [RegExp, (m: RegExpExecArray) => BuildPhase][] = [
  [/^Creating an optimized production build/i, () => ({ text: "compiling", ongoing: true })],
  [
    /^Compiled successfully(?: in (\S+))?/i,
    (m) => ({ text: m[1] ? `compiled in ${m[1]}` : "compiled", ongoing: false }),
  ],
  [/^Compiled with warnings/i, () => ({ text: "compiled with warnings", ongoing: false })],
  [/^Failed to compile/i, () => ({ text: "failed to compile", ongoing: false })],
  [
    /^(?:Linting|Running TypeScript|Checking validity of types)/i,
    () => ({ text: "checking types", ongoing: true }),
  ],
  [/^Collecting page data/i, () => ({ text: "collecting page data", ongoing: true })],
  [
    /^Generating static pages\b.*?(?:\((\d+)\/(\d+)\))?\s*(?:in (\S+))?\s*(?:\.\.\.)?$/i,
    (m) =>
      m[3]
        ? { text: `generated static pages (${m[1]}/${m[2]}) in ${m[3]}`, ongoing: false }
        : {
            text: m[1] ? `generating static pages (${m[1]}/${m[2]})` : "generating static pages",
            ongoing: true,
          },
  ],
  [/^Finalizing page optimization/i, () => ({ text: "finalizing", ongoing: true })],
  [/^Collecting build traces/i, () => ({ text: "collecting build traces", ongoing: true })],
];

/** The phase a line of `next build` output announces; undefined for every other line. */
export function buildPhase(line: string): BuildPhase | undefined {
  const text = line.replace(ANSI, "").replace(MARKERS, "").trim();
  for (const [pattern, describe] of PHASES) {
    const m = pattern.exec(text);
    if (m) return describe(m);
  }
  return undefined;
}

/**
 * Splits a stream's chunks into lines at \n, \r\n and \r (next build redraws its page
 * counter with \r); a line cut across chunks is held until its end arrives.
 */
export class LineSplitter {
  private rest = "";
  push(chunk: string): string[] {
    const parts = (this.rest + chunk).split(/\r\n|\r|\n/);
    this.rest = parts.pop() ?? "";
    return parts;
  }
  /** What is left when the stream ends. */
  end(): string[] {
    const last = this.rest;
    this.rest = "";
    return last ? [last] : [];
  }
}

/** A plain line is repeated this often while one phase goes on, off a terminal. */
export const QUIET_MS = 15_000;

/** Without colour codes, a long terminal line cleared by \x1b[2K stays one line. */
const ERASE_LINE = "\u001b[2K";

export class BuildProgress {
  private readonly started: number;
  private phase: BuildPhase = { text: "starting", ongoing: true };
  /** The phase's words without its counter: a new counter is not a new phase. */
  private phaseKey = "starting";
  private lastPlain: number;
  private drawn = false;

  constructor(
    private readonly out: ProgressOut,
    private readonly prefix = "[cellflow] ",
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    this.lastPlain = this.started;
  }

  private seconds(): number {
    return Math.floor((this.now() - this.started) / 1000);
  }

  /** A line of next build's output: a new phase is shown, anything else ignored. */
  line(raw: string): void {
    const phase = buildPhase(raw);
    if (!phase) return;
    const key = phase.text.replace(/\s*\(\d+\/\d+\)/, "");
    const isNew = key !== this.phaseKey;
    this.phase = phase;
    this.phaseKey = key;
    if (this.out.isTTY) this.draw();
    else if (isNew) this.plain();
  }

  /** Once a second: the terminal's line shows the time; off it, a line after QUIET_MS. */
  tick(): void {
    if (this.out.isTTY) this.draw();
    else if (this.now() - this.lastPlain >= QUIET_MS) this.plain();
  }

  /** The build ended well: its one closing line. */
  finish(): void {
    const line = `${this.prefix}web app built in ${this.seconds()} s\n`;
    this.out.write(this.drawn ? `${ERASE_LINE}${line}` : line);
    this.drawn = false;
  }

  /** The build failed: the status line goes, so the error starts on a clean line. */
  abandon(): void {
    if (this.drawn) this.out.write(ERASE_LINE);
    this.drawn = false;
  }

  /** The status text, e.g. "compiling… 12 s" or "12 s (compiled in 35.4s)". */
  private status(): string {
    const s = `${this.seconds()} s`;
    return this.phase.ongoing ? `${this.phase.text}… ${s}` : `${s} (${this.phase.text})`;
  }

  private draw(): void {
    // Erase, write, back to the start of the line: whatever else prints (a log line)
    // writes over the status from its first column instead of being appended to it.
    this.out.write(`${ERASE_LINE}${this.prefix}building the web app: ${this.status()}\r`);
    this.drawn = true;
  }

  private plain(): void {
    this.out.write(`${this.prefix}build: ${this.status()}\n`);
    this.lastPlain = this.now();
  }
}
