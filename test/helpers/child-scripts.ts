/**
 * Our own scripts run as child processes (`node --import tsx <script>`): the worker
 * (`npm run worker`), the load harness's API server. One way to spawn them for the tests,
 * bench, chaos and load: detached, in a process group of their own, so one signal to the
 * group reaches tsx's child too and a SIGKILL takes the whole process down at once as a
 * crash would. Free of vitest, so the scripts that run outside it can import it
 * (`workers.ts` adds the per-file cleanup the tests want).
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * Groups still running when this process ends however it ends (an exception, a test
 * timeout): a worker lives through a lost database, so a stray one would not go away.
 */
const live = new Set<number>();
process.once("exit", () => {
  for (const pid of live) signalGroup(pid, "SIGKILL");
});

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  // Never `kill(-0)`: that would signal our own process group.
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export interface ScriptProcess {
  pid: number;
  child: ChildProcess;
  /** What it printed (stdout and stderr), the last `tailChars` of it. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Signals the whole group and waits for the exit (at once if it has exited). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnOptions {
  /** How much output to keep: a long run's warnings must not grow without bound. */
  tailChars?: number;
  /** Every chunk it prints, as it comes, with its pid (a log file per process). */
  onChunk?: (chunk: Buffer, pid: number) => void;
}

/**
 * `command args` from the repository root with `env` on top of this process's
 * (LOG_LEVEL=warn unless given; a key set to undefined is removed), in a group of its own.
 * Not waited on: see `untilPrinted`.
 */
export function spawnGroup(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  options: SpawnOptions = {},
): ScriptProcess {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn" };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  const child = spawn(command, args, {
    cwd: root,
    env: merged,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid ?? 0;
  if (pid > 0) live.add(pid);
  const tail = options.tailChars ?? 1_000_000;
  let out = "";
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-tail);
    options.onChunk?.(c, pid);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      live.delete(pid);
      r({ code, signal });
    };
    if (child.exitCode !== null || child.signalCode !== null)
      done(child.exitCode, child.signalCode);
    else child.once("exit", done);
  });
  return {
    pid,
    child,
    output: () => out,
    exited,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup(pid, signal);
      await exited;
    },
  };
}

/**
 * `node --import tsx <script>`. tsx as a loader, not its CLI: the CLI's signal relay
 * SIGKILLs a child that is slow to acknowledge a signal, which a worker shutting down
 * gracefully is.
 */
export function spawnScript(
  script: string,
  env: Record<string, string | undefined>,
  options: SpawnOptions = {},
): ScriptProcess {
  return spawnGroup(process.execPath, ["--import", "tsx", script], env, options);
}

/**
 * Resolves once `p` has printed something `ready` matches; rejects if it exits first or
 * `timeoutMs` passes (then SIGKILLs it: a process that never became ready must not linger).
 */
export function untilPrinted(
  p: ScriptProcess,
  ready: RegExp,
  timeoutMs: number,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      signalGroup(p.pid, "SIGKILL");
      reject(new Error(`not ready in ${timeoutMs / 1000} s:\n${p.output()}`));
    }, timeoutMs);
    const check = () => {
      const m = ready.exec(p.output());
      if (!m) return;
      stop();
      resolve(m);
    };
    const stop = () => {
      clearTimeout(timer);
      p.child.stdout?.off("data", check);
      p.child.stderr?.off("data", check);
    };
    p.child.stdout?.on("data", check);
    p.child.stderr?.on("data", check);
    check();
    void p.exited.then(({ code, signal }) => {
      stop();
      reject(
        new Error(`exited (code ${code}, signal ${signal}) before it was ready:\n${p.output()}`),
      );
    });
  });
}

/** A worker process (`npm run worker`: src/server/worker.ts), once it says it is ready. */
export async function startWorkerProcess(
  env: Record<string, string | undefined>,
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<ScriptProcess> {
  const p = spawnScript("src/server/worker.ts", env, options);
  await untilPrinted(p, /worker ready/, options.timeoutMs ?? 120_000);
  return p;
}

/**
 * Runs one of our scripts to its end and reads the JSON it printed last (a report of what
 * it did, for a test to judge); its exit code and stderr go into the error otherwise.
 */
export function runReportingScript<T>(
  script: string,
  env: NodeJS.ProcessEnv,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: root,
      env: { LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.trim().split("\n").at(-1);
      if (code !== 0 || !line) reject(new Error(`${what} exited ${code}: ${err}`));
      else resolve(JSON.parse(line) as T);
    });
  });
}
