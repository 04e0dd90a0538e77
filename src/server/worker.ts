/**
 * `npm run worker`: a worker process on its own (several may run against one database).
 * Against DATABASE_URL when it is set; else it joins the embedded Postgres of the server
 * running on the same data folder (`npm start` or `npm run dev`), with that server's secret
 * key, and stops when that server stops. With neither, it says so and exits 2 before
 * touching anything. SIGINT/SIGTERM hand running carriers' cells back and exit.
 */
import path from "node:path";
import { runMigrations } from "@db/migrate";
import nextEnv from "@next/env";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { surviveDatabaseLoss } from "./crash-policy";
import { shownDataDir } from "./data-dir-lock";
import { JOINED_WORKER_NAME, waitForEmbeddedServer, watchJoinedServer } from "./join-embedded";
import { startWorker } from "./worker-runtime";

const root = process.cwd();
nextEnv.loadEnvConfig(root, false, { info: () => {}, error: console.error });

const say = (line: string) => process.stdout.write(`[cellflow] ${line}\n`);

/** How long to wait for a server that holds the data folder but has no Postgres up yet. */
const STARTING_SERVER_WAIT_MS = 60_000;

async function main(): Promise<void> {
  surviveDatabaseLoss(log());
  const env = readEnv();
  let direct = env.DATABASE_URL_UNPOOLED ?? env.DATABASE_URL;
  let url = env.DATABASE_URL ?? direct;
  let joined: { pid: number; dataDir: string } | undefined;
  if (!direct) {
    const dataDir = path.resolve(root, env.CELLFLOW_DATA_DIR);
    const shownDir = shownDataDir(root, dataDir);
    const found = await waitForEmbeddedServer({
      dataDir,
      shownDir,
      envSecretKey: env.CELLFLOW_SECRET_KEY,
      timeoutMs: STARTING_SERVER_WAIT_MS,
    });
    if (!found.ok) {
      process.stderr.write(`[cellflow] ${found.reason.message}\n`);
      process.exit(2);
    }
    direct = found.value.url;
    url = direct;
    // What the rest of the process reads: the services seal and open secrets with this key.
    process.env.DATABASE_URL = direct;
    process.env.CELLFLOW_SECRET_KEY = found.value.secretKey;
    joined = { pid: found.value.pid, dataDir };
    say(
      `joining the embedded Postgres of the server at pid ${found.value.pid} (data folder ${shownDir})`,
    );
  }
  await runMigrations(direct);
  const worker = await startWorker({
    url: url ?? direct,
    sessionUrl: direct,
    // The embedded Postgres speaks plain TCP on loopback, whatever the shell says.
    driver: joined ? "pg" : env.DATABASE_DRIVER,
    neonWsProxy: joined ? undefined : env.NEON_WS_PROXY,
    concurrency: env.WORKER_CONCURRENCY,
    redriveEveryMs: env.CELLFLOW_REDRIVE_EVERY_MS,
    env,
    // Named apart: the server waits for these at shutdown, not for workers it cannot tell.
    applicationName: joined ? JOINED_WORKER_NAME : undefined,
    log: log(),
  });
  say(`worker ready (pid ${process.pid})`);
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping the worker`);
    // Bounded: a stop that hangs or fails (the database gone) must not keep the process
    // up; cells it leaves running are handed back by the next re-drive.
    setTimeout(() => {
      process.stderr.write("[cellflow] the worker did not stop within 10 s; exiting\n");
      process.exit(1);
    }, 10_000).unref();
    void worker.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log().warn({ err }, "the worker failed to stop cleanly");
        process.exit(1);
      },
    );
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stop(signal));
  // A joined worker hands its cells back while the server's Postgres is still up, and
  // does not outlive the server it joined (its next start may use another port).
  if (joined) {
    const { pid } = joined;
    watchJoinedServer(joined.dataDir, pid, (why) =>
      stop(
        why === "stopping"
          ? `the server at pid ${pid} is stopping`
          : `the server at pid ${pid} is gone`,
      ),
    );
  }
}

void main();
