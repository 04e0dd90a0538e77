import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll } from "vitest";
import { waitFor } from "./processes";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * Every worker this test file spawned, killed when the file ends, wherever it was spawned
 * (a hook registered inside a running test is not one the file runs at its end). A worker
 * lives through a lost database, so one left behind would outlive the suite.
 */
const spawned = new Set<ChildProcess>();
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
};
afterAll(() => {
  for (const child of spawned) killGroup(child, "SIGKILL");
});
process.once("exit", () => {
  for (const child of spawned) killGroup(child, "SIGKILL");
});

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnedWorker {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the worker has exited. */
  exited: Promise<number | null>;
}

/**
 * `npm run worker` (tsx src/server/worker.ts) with exactly this environment on top of the
 * test's (a key set to undefined is removed), not waited on.
 */
export function spawnWorkerWith(env: Record<string, string | undefined>): SpawnedWorker {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn" };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  // tsx as a loader, not its CLI: the CLI's signal relay SIGKILLs a child that is slow to
  // acknowledge a signal, which a worker shutting down gracefully can be.
  const child = spawn(process.execPath, ["--import", "tsx", "src/server/worker.ts"], {
    cwd: root,
    env: merged,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  spawned.add(child);
  child.once("exit", () => spawned.delete(child));
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
  return { child, output: () => out, exited };
}

/** A real `npm run worker` process (tsx src/server/worker.ts) against the test database. */
export async function spawnWorker(
  url: string,
  concurrency = 10,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  const { child, output: out } = spawnWorkerWith({
    DATABASE_URL: url,
    WORKER_CONCURRENCY: String(concurrency),
    ...extraEnv,
  });
  const ready = await waitFor(
    () => out().includes("worker ready") || child.exitCode !== null,
    60_000,
    50,
  );
  if (!ready || child.exitCode !== null) throw new Error(`worker did not start:\n${out()}`);
  const proc: WorkerProcess = {
    child,
    output: out,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      // The whole group: tsx runs the worker in a child process of its own.
      killGroup(child, signal);
      await exited;
    },
  };
  return proc;
}
