/**
 * A stand-in for the trigger.dev platform, for the trigger.dev outage scenario. The
 * trigger.dev service cannot run here, so what is real and what is simulated:
 *
 * - Real: the `TriggerBackend` (the SDK's HTTP calls, its retries and batching) against
 *   the loopback fake of the API (`fake-trigger.ts` beside this file); the engine functions
 *   the tasks wrap (`runCarrier` with `chain: false`, as `src/trigger/row-carrier.ts`
 *   calls it; `runStamper`; `redriveOrphans`, as the `redrive-orphans` schedule calls
 *   it); Postgres; the http blocks' calls to the sink.
 * - Simulated, here: the platform's queue and run execution. Each run the fake accepted
 *   is executed in this process (not in its own machine), at most `concurrency` at once,
 *   deduplicated by idempotency key, delayed runs after their delay; a run that throws
 *   is failed and not retried (the task sets `retry: { maxAttempts: 1 }`). The re-drive
 *   schedule runs every `everyMs` (trigger.dev's cron is every minute). A run the API
 *   cancelled ends as trigger.dev ends it: its signal is aborted, and its process being
 *   gone, nothing it would still ask of the platform (the next carrier for its row, the
 *   rows it handed out) is made. Run metadata (the dashboard's progress) is not reported:
 *   there is no task context.
 * - A run's process, where it matters: with `limiterPerRun`, each run builds its own rate
 *   limiter, as each trigger.dev run (its own process) does at its composition root, so
 *   each stands in a line of its own per key (src/limits/rate/line.ts) and the runs'
 *   fronts compete at the shared limiter, as separate processes do. Without it, every run
 *   shares the deps' limiter, as the carriers of one worker process do.
 */
import { setMaxListeners } from "node:events";
import { CarrierPayloadSchema, StampPayloadSchema, TASKS, type TaskBackend } from "@/backends/port";
import { sleep } from "@/domain/sleep";
import { runCarrier } from "@/engine/carrier";
import type { Engine } from "@/engine/handle";
import { redriveOrphans } from "@/engine/redrive";
import { runStamper } from "@/engine/stamper";
import { RateLines } from "@/limits/rate/line";
import type { RateLimiter } from "@/limits/rate/port";
import type { FakeTrigger, TriggeredRun } from "./fake-trigger";

export interface PlatformStats {
  /** Runs the API accepted, and those it swallowed as repeats of an idempotency key. */
  triggered: number;
  deduplicated: number;
  started: number;
  /** Runs a cancel ended while they were executing. */
  killed: number;
  /** Runs whose task threw (the carrier could not enqueue the rows it handed out, …). */
  failed: number;
  failures: Record<string, number>;
  redrivePasses: number;
  /** Passes that threw (their enqueue failed): the next pass covers the same cells. */
  redriveFailures: number;
}

export class SimulatedTriggerPlatform {
  readonly stats: PlatformStats = {
    triggered: 0,
    deduplicated: 0,
    started: 0,
    killed: 0,
    failed: 0,
    failures: {},
    redrivePasses: 0,
    redriveFailures: 0,
  };
  private readonly queue: TriggeredRun[] = [];
  private readonly keys = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopping = new AbortController();
  private running = 0;
  private readonly executing = new Map<string, { controller: AbortController; killed: boolean }>();
  private schedule: NodeJS.Timeout | undefined;
  private redriving: Promise<void> | undefined;

  constructor(
    fake: FakeTrigger,
    private readonly deps: Engine,
    private readonly concurrency: number,
    private readonly opts: { limiterPerRun?: () => RateLimiter } = {},
  ) {
    fake.onRun((run) => this.accept(run));
    fake.onCancel((runId) => this.kill(runId));
    // Every running carrier listens on the one shutdown signal.
    setMaxListeners(0, this.stopping.signal);
  }

  /** The `redrive-orphans` schedule; a pass still going when the next is due is not doubled. */
  startSchedule(everyMs: number): void {
    this.schedule = setInterval(() => {
      if (this.redriving !== undefined) return;
      this.redriving = redriveOrphans(this.deps)
        .then(() => {
          this.stats.redrivePasses++;
        })
        .catch(() => {
          this.stats.redriveFailures++;
        })
        .finally(() => {
          this.redriving = undefined;
        });
    }, everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.schedule);
    for (const t of this.timers) clearTimeout(t);
    this.queue.length = 0;
    this.stopping.abort(new Error("platform stopping"));
    await this.redriving;
    while (this.running > 0) await sleep(20);
  }

  private accept(run: TriggeredRun): void {
    if (run.idempotencyKey) {
      if (this.keys.has(run.idempotencyKey)) {
        this.stats.deduplicated++;
        return;
      }
      this.keys.add(run.idempotencyKey);
    }
    this.stats.triggered++;
    if (run.delayMs) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.enqueue(run);
      }, run.delayMs);
      this.timers.add(timer);
    } else {
      this.enqueue(run);
    }
  }

  private enqueue(run: TriggeredRun): void {
    if (this.stopping.signal.aborted) return;
    this.queue.push(run);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.concurrency && !this.stopping.signal.aborted) {
      const run = this.queue.shift();
      if (!run) return;
      this.running++;
      void this.execute(run).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** A cancel of a run executing: its signal aborts, and it asks nothing more of the platform. */
  private kill(runId: string): void {
    const run = this.executing.get(runId);
    if (!run || run.killed) return;
    run.killed = true;
    this.stats.killed++;
    run.controller.abort(new Error("run cancelled"));
  }

  private async execute(run: TriggeredRun): Promise<void> {
    this.stats.started++;
    const entry = { controller: new AbortController(), killed: false };
    this.executing.set(run.id, entry);
    const onStop = () => entry.controller.abort(this.stopping.signal.reason);
    if (this.stopping.signal.aborted) onStop();
    else this.stopping.signal.addEventListener("abort", onStop, { once: true });
    const ctx = { runId: run.id, signal: entry.controller.signal };
    const limiter = this.opts.limiterPerRun?.();
    const own = this.deps.backend;
    const backend: TaskBackend = {
      kind: own.kind,
      tableConcurrency: own.tableConcurrency,
      remoteCancel: own.remoteCancel,
      enqueue: async (specs) => {
        if (!entry.killed) await own.enqueue(specs);
      },
      cancelRun: (id) => own.cancelRun(id),
      close: () => own.close(),
    };
    try {
      if (run.task === TASKS.carrier) {
        const payload = CarrierPayloadSchema.parse(run.payload);
        await runCarrier(
          {
            ...this.deps,
            ...(limiter ? { lines: new RateLines(limiter) } : {}),
            backend,
            chain: false,
          },
          payload,
          ctx,
        );
      } else if (run.task === TASKS.stamper) {
        const payload = StampPayloadSchema.parse(run.payload);
        await runStamper({ database: this.deps.database, backend }, payload, ctx);
      } else {
        throw new Error(`no task ${run.task}`);
      }
    } catch (err) {
      this.stats.failed++;
      const m = (err instanceof Error ? err.message : String(err)).slice(0, 120);
      this.stats.failures[m] = (this.stats.failures[m] ?? 0) + 1;
    } finally {
      await limiter?.close();
      this.stopping.signal.removeEventListener("abort", onStop);
      this.executing.delete(run.id);
    }
  }
}
