import { afterAll } from "vitest";
import { type ScriptProcess, spawnScript, untilPrinted } from "./child-scripts";

/**
 * Every worker this test file spawned, killed when the file ends, wherever it was spawned
 * (a hook registered inside a running test is not one the file runs at its end). A worker
 * lives through a lost database, so one left behind would outlive the suite.
 */
const spawned = new Set<ScriptProcess>();
afterAll(async () => {
  await Promise.all([...spawned].map((p) => p.kill("SIGKILL")));
});

export interface WorkerProcess {
  child: ScriptProcess["child"];
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnedWorker {
  child: ScriptProcess["child"];
  output(): string;
  /** Resolves with the exit code once the worker has exited. */
  exited: Promise<number | null>;
}

function spawnTracked(env: Record<string, string | undefined>): ScriptProcess {
  const p = spawnScript("src/server/worker.ts", env);
  spawned.add(p);
  void p.exited.then(() => spawned.delete(p));
  return p;
}

/**
 * `npm run worker` (tsx src/server/worker.ts) with exactly this environment on top of the
 * test's (a key set to undefined is removed), not waited on.
 */
export function spawnWorkerWith(env: Record<string, string | undefined>): SpawnedWorker {
  const p = spawnTracked(env);
  return { child: p.child, output: p.output, exited: p.exited.then((e) => e.code) };
}

/** A real `npm run worker` process (tsx src/server/worker.ts) against the test database. */
export async function spawnWorker(
  url: string,
  concurrency = 10,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  const p = spawnTracked({
    DATABASE_URL: url,
    WORKER_CONCURRENCY: String(concurrency),
    ...extraEnv,
  });
  try {
    await untilPrinted(p, /worker ready/, 60_000);
  } catch (err) {
    throw new Error(`worker did not start: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { child: p.child, output: p.output, kill: p.kill };
}
