/**
 * `run --follow`: a run's progress until it ends, from its counts (GET /runs/:id) woken by
 * the table's event stream. Guarantees: the counts are read again soon after any cell
 * event (throttled) and at once when the run's own `dispatch` or `limit` event arrives, and
 * every 2 s regardless, so a dropped stream only slows the display; at most one read is in
 * flight. A terminal gets one redrawn bar; anything else gets a plain line every few
 * seconds, one at the start and one at the end. Detaching (the signal) never touches the
 * run. The run's end is judged by the caller (progress.ts `runEnd`).
 */
import type { Schemas } from "@/client/cellflow-client";
import { parseTableEvent } from "@/contracts/events";
import { type Connection, call } from "./connection";
import type { Output } from "./context";
import { tailEvents } from "./event-stream";
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
  const stop = new AbortController();
  const meter = new RateMeter();
  let run: RunView | undefined;
  let failure: CliFailure | undefined;
  let detached = false;
  let lastRead = Date.now();
  let reading = false;
  let again = false;
  let soon: NodeJS.Timeout | undefined;
  let drawn = false;

  const line = (): string => {
    if (!run) return "";
    const p = progressOf(run);
    return o.tty
      ? barLine(p, meter.rate(), Math.max(20, (o.out.columns || 80) - 1))
      : plainLine(o.runId, p, meter.rate());
  };
  const draw = () => {
    if (!run || stop.signal.aborted) return;
    if (o.tty) o.out.write(`\r${line()}\x1b[K`);
    else o.out.write(`${line()}\n`);
    drawn = true;
  };

  let ended: () => void = () => {};
  const end = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const finish = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    clearTimeout(soon);
    clearInterval(poll);
    clearInterval(tick);
    ended();
  };

  const read = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const r = await call(
          o.conn,
          o.conn.client.GET("/api/tables/{id}/runs/{dispatchId}", {
            params: { path: { id: o.tableId, dispatchId: o.runId } },
          }),
        );
        if (stop.signal.aborted) return;
        if (r.ok) {
          run = r.value;
          lastRead = Date.now();
          meter.add(lastRead, progressOf(run).done);
          if (run.status !== "active") finish();
          else if (o.tty || !drawn) draw();
        } else if ((r.reason.status ?? 500) < 500 || Date.now() - lastRead > GIVE_UP_MS) {
          failure = r.reason;
          finish();
        }
      } while (again && !stop.signal.aborted);
    } finally {
      reading = false;
    }
  };
  const readSoon = (ms: number) => {
    if (soon || stop.signal.aborted) return;
    soon = setTimeout(() => {
      soon = undefined;
      void read();
    }, ms);
  };

  const poll = setInterval(() => void read(), POLL_MS);
  const tick = setInterval(draw, o.tty ? 500 : (o.lineEveryMs ?? 3_000));
  const onDetach = () => {
    detached = true;
    finish();
  };
  o.detach.addEventListener("abort", onDetach, { once: true });
  if (o.detach.aborted) onDetach();

  const tail = tailEvents({
    conn: o.conn,
    tableId: o.tableId,
    signal: stop.signal,
    onEvent: (e) => {
      const event = parseTableEvent(e.event, e.data);
      const mine =
        (event?.event === "dispatch" || event?.event === "limit") &&
        event.data.dispatchId === o.runId;
      if (mine) void read();
      else if (event?.event === "cell" || event?.event === "reset") readSoon(o.tty ? 250 : 1_000);
    },
  });
  await read();
  await end;
  o.detach.removeEventListener("abort", onDetach);
  // The stream's own refusals are not fatal here: the counts are what the follow judges by.
  await tail;
  if (failure) {
    if (o.tty && drawn) o.out.write("\n");
    return { ok: false, reason: failure };
  }
  // The last state, drawn once more so the final figures are on screen (or in the log).
  if (run) {
    if (o.tty) o.out.write(`\r${line()}\x1b[K\n`);
    else o.out.write(`${line()}\n`);
  }
  return {
    ok: true,
    value: { how: detached ? "detached" : "ended", run, elapsedMs: Date.now() - started },
  };
}
