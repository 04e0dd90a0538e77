/**
 * Real worker processes (`src/server/worker.ts`, what `npm run worker` runs) for the
 * chaos scenarios. Each is spawned detached, in a process group of its own, so a
 * SIGKILL of the group takes the whole process down at once as a crash would. A pool
 * notices a worker that exits without being told to (that is a finding, reported) and
 * brings it back, as a process supervisor would, so the run can still be judged.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { untilStopped } from "./cleanup";

const root = path.resolve(import.meta.dirname, "..");

/**
 * Workers still running when this process ends however it ends (an exception, a test
 * timeout): a worker lives through a lost database, so a stray one would not go away.
 */
const live = new Set<number>();
process.once("exit", () => {
  for (const pid of live) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});
/** What a worker printed last: enough to see why it died, bounded in memory. */
const TAIL_CHARS = 8_000;

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  output(): string;
  /** Signals the whole group and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  // tsx as a loader, not its CLI: one process per worker, and no signal relay in between.
  const child = spawn(process.execPath, ["--import", "tsx", "src/server/worker.ts"], {
    cwd: root,
    env: {
      ...process.env,
      LOG_LEVEL: process.env.CHAOS_WORKER_LOG_LEVEL ?? "warn",
      // Loopback sinks: the outbound guard refuses private addresses unless told.
      CELLFLOW_ALLOW_PRIVATE_NETWORK: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  // CHAOS_WORKER_LOG=<dir>: every worker's whole output, one file per process, for a post-mortem.
  const logDir = process.env.CHAOS_WORKER_LOG;
  const file = logDir ? path.join(logDir, `worker-${child.pid}.log`) : undefined;
  if (logDir) fs.mkdirSync(logDir, { recursive: true });
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-TAIL_CHARS);
    if (file) fs.appendFileSync(file, c);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  if (child.pid) live.add(child.pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => {
      if (child.pid) live.delete(child.pid);
      r({ code, signal });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not ready in time: it must not linger as a stray worker.
      if (child.pid) process.kill(-child.pid, "SIGKILL");
      reject(new Error(`worker did not start in 120 s:\n${out}`));
    }, 120_000);
    const check = () => {
      if (out.includes("worker ready")) {
        clearTimeout(timer);
        child.stdout?.off("data", check);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited during start (code ${code}):\n${out}`));
    });
  });
  const pid = child.pid ?? 0;
  return {
    pid,
    child,
    output: () => out,
    exited,
    async kill(signal) {
      // Never `kill(-0)`: that would signal our own process group.
      if (pid <= 0 || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-pid, signal);
      } catch {
        // Gone between the check and the signal.
      }
      await exited;
    },
  };
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
      await new Promise((r) => setTimeout(r, 1_000));
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
