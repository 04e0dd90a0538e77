/**
 * The process's flush loop: every FLUSH_EVERY_MS it sends what its series grew by (and its
 * gauges) through the target's one statement (store/metrics/flush.ts), and at its stop a
 * last flush, then retires the process's rows. One loop per set of metrics, whoever asks
 * for it (the embedded server runs the web server and a worker in one process): each
 * `start` shares it, and the last `stop` ends it. Flushes never overlap: two at once
 * would send the same growth twice. A flush that fails keeps the growth for the next.
 */
import type { Registry } from "prom-client";
import { type FlushBook, readSeries, type SeriesValue } from "./deltas";

/** Which process kinds flush: the web server, `npm run worker`, a trigger.dev run's process. */
export type ProcessKind = "server" | "worker" | "trigger";

/** What a loop flushes: a process's registry, under its id, with its heartbeat gauge. */
export interface FlushSource {
  readonly registry: Registry;
  readonly processId: string;
  /** Sets the heartbeat (`cellflow_processes{kind}` = 1) the flush sends every time. */
  alive(kind: ProcessKind): void;
}

/** How often a process flushes its series. */
export const FLUSH_EVERY_MS = 10_000;
/** A process that has not flushed for this long is expired (its counters kept in `gone`). */
export const EXPIRE_AFTER_MS = 5 * 60_000;

export interface FlushTarget {
  flush(process: { id: string; kind: ProcessKind }, series: readonly SeriesValue[]): Promise<void>;
  retire(processId: string): Promise<void>;
  onError(err: unknown): void;
}

export interface FlushHandle {
  /** Flushes now (a trigger.dev run before its process may be frozen). */
  flushNow(): Promise<void>;
  stop(): Promise<void>;
}

export class FlushLoop {
  private users = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly metrics: FlushSource,
    private readonly book: FlushBook,
    private readonly kind: ProcessKind,
    private readonly target: FlushTarget,
    private readonly everyMs: number,
  ) {}

  /** Nobody flushes through it any more: the next start may bring another target. */
  get idle(): boolean {
    return this.users === 0;
  }

  start(): FlushHandle {
    this.users += 1;
    if (this.users === 1) {
      this.metrics.alive(this.kind);
      this.timer = setInterval(() => void this.flush(), this.everyMs);
      this.timer.unref();
    }
    let stopped = false;
    return {
      flushNow: () => this.flush(),
      stop: async () => {
        if (stopped) return;
        stopped = true;
        this.users -= 1;
        if (this.users > 0) return;
        clearInterval(this.timer);
        this.timer = undefined;
        await this.flush();
        await this.target
          .retire(this.metrics.processId)
          .catch((err: unknown) => this.target.onError(err));
      },
    };
  }

  /** One flush; a flush already running is waited for, then this one runs. */
  flush(): Promise<void> {
    const next = (this.running ?? Promise.resolve()).then(() => this.once());
    this.running = next;
    void next.finally(() => {
      if (this.running === next) this.running = undefined;
    });
    return next;
  }

  private async once(): Promise<void> {
    try {
      const now = await readSeries(this.metrics.registry);
      await this.target.flush(
        { id: this.metrics.processId, kind: this.kind },
        this.book.pending(now),
      );
      this.book.committed(now);
    } catch (err) {
      this.target.onError(err);
    }
  }
}
