/**
 * The real `npm start` (or `npm run dev`) for end-to-end tests: a data directory of the
 * test's own, its ports, the printed URL, key and server pid; stopped with SIGTERM as a
 * service manager would, or SIGINT as Ctrl-C would.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { spawnGroup } from "./child-scripts";
import { processesMentioning, waitFor } from "./processes";

export interface Started {
  child: ChildProcess;
  url: string;
  key: string;
  pgPort: number;
  /** The server's own pid, as it printed it (npm execs it, so also `child.pid`). */
  pid: number;
  /** The printed link that signs a browser in (the key in its fragment). */
  signinUrl: string;
  output: () => string;
  ms: number;
}

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code once npm (and so the server) has exited. */
  exited: Promise<number | null>;
}

export interface SpawnOptions {
  /** The npm script: `start` (default) or `dev`. */
  script?: "start" | "dev";
  env?: Record<string, string>;
}

/** `npm start` on the data directory and ports, not waited on. */
export function spawnCellflow(
  dataDir: string,
  port: number,
  pgPort: number,
  opts: SpawnOptions = {},
): Spawned {
  // Its own process group, so a signal to the group reaches npm and the server alike, as
  // Ctrl-C in a terminal does; npm itself forwards a SIGTERM sent to it alone.
  const p = spawnGroup("npm", opts.script === "dev" ? ["run", "dev"] : ["start"], {
    PORT: String(port),
    CELLFLOW_PG_PORT: String(pgPort),
    CELLFLOW_DATA_DIR: dataDir,
    ...opts.env,
    DATABASE_URL: undefined,
    CELLFLOW_API_KEY: undefined,
  });
  return { child: p.child, output: p.output, exited: p.exited.then((e) => e.code) };
}

export async function startCellflow(
  dataDir: string,
  port: number,
  pgPort: number,
  opts: SpawnOptions = {},
): Promise<Started> {
  const began = Date.now();
  const { child, output } = spawnCellflow(dataDir, port, pgPort, opts);
  const ready = await waitFor(
    () => /API key: (\S+)/.test(output()) || child.exitCode !== null,
    170_000,
    100,
  );
  const out = output();
  const key = /API key: (\S+)/.exec(out)?.[1];
  if (!ready || !key) throw new Error(`npm start did not come up:\n${out}`);
  const url = /URL:\s+(\S+)/.exec(out)?.[1] ?? `http://127.0.0.1:${port}`;
  const signinUrl = /open:\s+(\S+)/.exec(out)?.[1] ?? `${url}/signin`;
  const pid = Number(/ready in [\d.]+ s \(pid (\d+)\)/.exec(out)?.[1] ?? child.pid);
  return { child, url, key, signinUrl, pgPort, pid, output, ms: Date.now() - began };
}

/**
 * SIGTERM as a service manager would send it (or SIGINT to the group, as Ctrl-C); true once
 * the server said it stopped and postgres is gone.
 */
export async function stopCellflow(
  dataDir: string,
  s: Started,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<boolean> {
  if (s.child.exitCode === null && s.child.signalCode === null && s.child.pid)
    process.kill(-s.child.pid, signal);
  const clusterDir = path.join(dataDir, "pg");
  const done = await waitFor(
    () => s.output().includes("[cellflow] stopped") && processesMentioning(clusterDir).length === 0,
    120_000,
    100,
  );
  // Slow shutdown steps are worth seeing even when the test passes.
  for (const line of s.output().split("\n"))
    if (/did not stop|to stop$/.test(line)) process.stdout.write(`[e2e] ${line}\n`);
  return done;
}
