/**
 * `run --follow`: a run's progress until it ends, from its counts (GET /runs/:id) woken by
 * the table's event stream. Guarantees: the counts are read again soon after any cell,
 * `dispatch` or `progress` event (throttled) and at once when the run's own end (its
 * `dispatch` event with a status other than `active`) or `limit` event arrives, and
 * every 2 s regardless, so a dropped stream only slows the display; at most one read is in
 * flight. A terminal gets one redrawn bar; anything else gets a plain line every few
 * seconds, one at the start and one at the end. Detaching (the signal) never touches the
 * run. The run's end is judged by the caller (progress.ts `runEnd`). A bulk `rows` event
 * (an import's batch, a bulk delete) prints a line of its own with its count.
 */
import type { Schemas } from "@/client/cellflow-client";
import { parseTableEvent } from "@/contracts/events";
import { type Connection, call } from "./connection";
import type { Output } from "./context";
import { type StreamEvent, tailEvents } from "./event-stream";
import type { CliFailure, CliResult } from "./failure";
import { barLine, plainLine, progressOf, RateMeter } from "./progress";

type RunView = Schemas["RunView"];

export interface FollowOptions {
  conn: Connection;
  tableId: string;
  runId: string;
  out: Output;
  /** Redraw one bar (a terminal) or print plain lines. */
  tty: boolean;
  /** Ctrl-C: stop following, leave the run alone. */
  detach: AbortSignal;
  /** Plain lines this often (default 3 s). */
  lineEveryMs?: number;
}

export type FollowEnd = { how: "ended" | "detached"; run: RunView | undefined; elapsedMs: number };

const POLL_MS = 2_000;
/** How long the counts may stay unreadable (server restarting, network) before giving up. */
const GIVE_UP_MS = 60_000;

export async function followRun(o: FollowOptions): Promise<CliResult<FollowEnd>> {
  const started = Date.now();
  const follow = new Follow(o);
  const onDetach = () => follow.detach();
  o.detach.addEventListener("abort", onDetach, { once: true });
  if (o.detach.aborted) onDetach();
  const tail = tailEvents({
    conn: o.conn,
    tableId: o.tableId,
    signal: follow.stopped,
    onEvent: (e) => follow.onEvent(e),
  });
  await follow.read();
  await follow.ended;
  o.detach.removeEventListener("abort", onDetach);
  // The stream's own refusals are not fatal here: the counts are what the follow judges by.
  await tail;
  return follow.result(started);
}

/**
 * When an event makes the follow read the run's counts: at once for the run's own end or
 * limit; soon (throttled) for any other change of cells — a cell event, a run's stamping
 * page or Stop (one `dispatch` event stands for many cells' events), a progress event.
 */
export function readAfter(e: StreamEvent, runId: string): "now" | "soon" | "no" {
  const event = parseTableEvent(e.event, e.data);
  if (!event) return "no";
  const ended =
    event.event === "limit" || (event.event === "dispatch" && event.data.status !== "active");
  if (ended && event.data.dispatchId === runId) return "now";
  // Rows deleted take their cells, and the run's counts, with them.
  const changed =
    ["cell", "dispatch", "progress", "reset"].includes(event.event) ||
    (event.event === "rows" && event.data.op === "delete");
  return changed ? "soon" : "no";
}

/**
 * The line a bulk `rows` event prints (an import's batch, a bulk delete: a count, no
 * ids), e.g. "rows: 25,000 inserted"; null for any other event.
 */
export function rowsNote(e: StreamEvent): string | null {
  const event = parseTableEvent(e.event, e.data);
  if (event?.event !== "rows" || !event.data.bulk || event.data.count === undefined) return null;
  const did = event.data.op === "delete" ? "deleted" : "inserted";
  return `rows: ${event.data.count.toLocaleString("en-US")} ${did}`;
}

/**
 * One follow's state: the run as last read, the timers that read and draw it, and what
 * ended it. `finish` stops them all at once: nothing is read or drawn after it.
 */
class Follow {
  private readonly o: FollowOptions;
  private readonly stop = new AbortController();
  private readonly meter = new RateMeter();
  private run: RunView | undefined;
  private failure: CliFailure | undefined;
  private detached = false;
  private lastRead = Date.now();
  private reading = false;
  private again = false;
  private soon: NodeJS.Timeout | undefined;
  private drawn = false;
  private markEnded: () => void = () => {};
  /** Resolves once the run ended, the counts could not be read, or the caller detached. */
  readonly ended = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });
  private readonly poll: NodeJS.Timeout;
  private readonly tick: NodeJS.Timeout;

  constructor(o: FollowOptions) {
    this.o = o;
    this.poll = setInterval(() => void this.read(), POLL_MS);
    this.tick = setInterval(() => this.draw(), o.tty ? 500 : (o.lineEveryMs ?? 3_000));
  }

  get stopped(): AbortSignal {
    return this.stop.signal;
  }

  detach(): void {
    this.detached = true;
    this.finish();
  }

  onEvent(e: StreamEvent): void {
    const note = rowsNote(e);
    if (note) this.say(note);
    const when = readAfter(e, this.o.runId);
    if (when === "now") void this.read();
    else if (when === "soon") this.readSoon(this.o.tty ? 250 : 1_000);
  }

  /** Reads the counts; a read asked for while one is in flight runs once right after it. */
  async read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        await this.readOnce();
      } while (this.again && !this.stop.signal.aborted);
    } finally {
      this.reading = false;
    }
  }

  private async readOnce(): Promise<void> {
    const { conn, tableId, runId } = this.o;
    const r = await call(
      conn,
      conn.client.GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: tableId, dispatchId: runId } },
      }),
    );
    if (this.stop.signal.aborted) return;
    if (r.ok) {
      this.run = r.value;
      this.lastRead = Date.now();
      this.meter.add(this.lastRead, progressOf(this.run).done);
      if (this.run.status !== "active") this.finish();
      else if (this.o.tty || !this.drawn) this.draw();
    } else if ((r.reason.status ?? 500) < 500 || Date.now() - this.lastRead > GIVE_UP_MS) {
      this.failure = r.reason;
      this.finish();
    }
  }

  private readSoon(ms: number): void {
    if (this.soon || this.stop.signal.aborted) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.read();
    }, ms);
  }

  private line(): string {
    if (!this.run) return "";
    const p = progressOf(this.run);
    return this.o.tty
      ? barLine(p, this.meter.rate(), Math.max(20, (this.o.out.columns || 80) - 1))
      : plainLine(this.o.runId, p, this.meter.rate());
  }

  /** A line of its own; a terminal's bar is drawn again under it. */
  private say(text: string): void {
    if (this.stop.signal.aborted) return;
    if (!this.o.tty) {
      this.o.out.write(`${text}\n`);
      return;
    }
    this.o.out.write(`\r${text}\x1b[K\n`);
    if (this.drawn) this.draw();
  }

  private draw(): void {
    if (!this.run || this.stop.signal.aborted) return;
    if (this.o.tty) this.o.out.write(`\r${this.line()}\x1b[K`);
    else this.o.out.write(`${this.line()}\n`);
    this.drawn = true;
  }

  private finish(): void {
    if (this.stop.signal.aborted) return;
    this.stop.abort();
    clearTimeout(this.soon);
    clearInterval(this.poll);
    clearInterval(this.tick);
    this.markEnded();
  }

  /** The follow's answer once it ended, the final figures written out. */
  result(started: number): CliResult<FollowEnd> {
    if (this.failure) {
      if (this.o.tty && this.drawn) this.o.out.write("\n");
      return { ok: false, reason: this.failure };
    }
    // The last state, drawn once more so the final figures are on screen (or in the log).
    if (this.run) {
      if (this.o.tty) this.o.out.write(`\r${this.line()}\x1b[K\n`);
      else this.o.out.write(`${this.line()}\n`);
    }
    const how = this.detached ? "detached" : "ended";
    return { ok: true, value: { how, run: this.run, elapsedMs: Date.now() - started } };
  }
}
