/**
 * Real worker processes (`src/server/worker.ts`, what `npm run worker` runs) for the
 * chaos scenarios. Each is spawned detached, in a process group of its own, so a
 * SIGKILL of the group takes the whole process down at once as a crash would. A pool
 * notices a worker that exits without being told to (that is a finding, reported) and
 * brings it back, as a process supervisor would, so the run can still be judged.
 */
import fs from "node:fs";
import path from "node:path";
import { sleep } from "@/domain/sleep";
import { type ScriptProcess, startWorkerProcess } from "../test/helpers/child-scripts";
import { untilStopped } from "./cleanup";

/** What a worker printed last: enough to see why it died, bounded in memory. */
const TAIL_CHARS = 8_000;

export type WorkerProcess = ScriptProcess;

export function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  // CHAOS_WORKER_LOG=<dir>: every worker's whole output, one file per process, for a post-mortem.
  const logDir = process.env.CHAOS_WORKER_LOG;
  if (logDir) fs.mkdirSync(logDir, { recursive: true });
  return startWorkerProcess(
    {
      LOG_LEVEL: process.env.CHAOS_WORKER_LOG_LEVEL ?? "warn",
      // Loopback sinks: the outbound guard refuses private addresses unless told.
      CELLFLOW_ALLOW_PRIVATE_NETWORK: "1",
      ...env,
    },
    {
      tailChars: TAIL_CHARS,
      timeoutMs: 120_000,
      onChunk: logDir
        ? (c, pid) => fs.appendFileSync(path.join(logDir, `worker-${pid}.log`), c)
        : undefined,
    },
  );
}

export interface UnexpectedExit {
  slot: number;
  atMs: number;
  /** Wall clock of the exit, and of the supervisor's restart (when it happened). */
  wallAt: number;
  restartedAt?: number;
  code: number | null;
  signal: string | null;
  output: string;
}

/** N worker slots; kills and restarts by slot; records exits nobody asked for. */
export class WorkerPool {
  private readonly slots: (WorkerProcess | undefined)[] = [];
  private readonly killing = new Set<WorkerProcess>();
  private closed = false;
  private readonly forget: () => void;
  readonly unexpected: UnexpectedExit[] = [];

  constructor(
    private readonly env: Record<string, string>,
    private readonly started = Date.now(),
  ) {
    this.forget = untilStopped(() => this.stop());
  }

  async start(n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, (_, i) => this.restart(i)));
  }

  get size(): number {
    return this.slots.length;
  }

  async restart(slot: number): Promise<void> {
    const w = await spawnWorker(this.env);
    if (this.closed) {
      // The pool stopped while this one was starting: it must not outlive the run.
      this.killing.add(w);
      await w.kill("SIGTERM");
      return;
    }
    this.slots[slot] = w;
    void w.exited.then(({ code, signal }) => {
      if (this.killing.has(w) || this.closed) return;
      const exit: UnexpectedExit = {
        slot,
        atMs: Date.now() - this.started,
        wallAt: Date.now(),
        code,
        signal,
        output: w.output().slice(-2_000),
      };
      this.unexpected.push(exit);
      if (this.slots[slot] === w) this.slots[slot] = undefined;
      void this.revive(slot, exit);
    });
  }

  /**
   * What a supervisor does: starts the slot again a second after a crash, and again
   * while starting fails (the database it migrates against may still be down).
   */
  private async revive(slot: number, exit: UnexpectedExit): Promise<void> {
    while (!this.closed && this.slots[slot] === undefined) {
      await sleep(1_000);
      if (this.closed || this.slots[slot] !== undefined) return;
      try {
        await this.restart(slot);
        exit.restartedAt = Date.now();
      } catch {
        // Retried after the next second.
      }
    }
  }

  /** SIGKILLs the worker in `slot` (its whole process group). */
  async kill(slot: number): Promise<number | undefined> {
    const w = this.slots[slot];
    if (!w) return undefined;
    this.killing.add(w);
    this.slots[slot] = undefined;
    await w.kill("SIGKILL");
    return w.pid;
  }

  /** Stops every worker (SIGTERM: they hand their cells back), SIGKILL after 30 s. */
  async stop(): Promise<void> {
    this.closed = true;
    this.forget();
    await Promise.all(
      this.slots.map(async (w) => {
        if (!w) return;
        this.killing.add(w);
        const late = setTimeout(() => void w.kill("SIGKILL"), 30_000);
        await w.kill("SIGTERM");
        clearTimeout(late);
      }),
    );
  }
}
