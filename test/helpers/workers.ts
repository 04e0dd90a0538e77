import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll } from "vitest";
import { waitFor } from "./processes";

const root = path.resolve(import.meta.dirname, "../..");

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A real `npm run worker` process (tsx src/server/worker.ts) against the test database. */
export async function spawnWorker(
  url: string,
  concurrency = 10,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  // tsx as a loader, not its CLI: the CLI's signal relay SIGKILLs a child that is slow to
  // acknowledge a signal, which a worker shutting down gracefully can be.
  const child = spawn(process.execPath, ["--import", "tsx", "src/server/worker.ts"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      WORKER_CONCURRENCY: String(concurrency),
      LOG_LEVEL: "warn",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const ready = await waitFor(
    () => out.includes("worker ready") || child.exitCode !== null,
    60_000,
    50,
  );
  if (!ready || child.exitCode !== null) throw new Error(`worker did not start:\n${out}`);
  const proc: WorkerProcess = {
    child,
    output: () => out,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      // The whole group: tsx runs the worker in a child process of its own.
      if (child.pid) process.kill(-child.pid, signal);
      await exited;
    },
  };
  afterAll(() => proc.kill("SIGKILL"));
  return proc;
}
