/**
 * The server process behind `npm start` and `npm run dev`: the data folder's lock →
 * Postgres (embedded unless DATABASE_URL is set, restarted if it dies) → migrations → the
 * default workspace and its key → the in-process worker → the Next.js server (the built
 * app, built first when its sources changed; or, with `dev`, Next.js's dev server, which
 * recompiles what changed and builds nothing up front). Invariants: one server per data
 * folder (a second start refuses, naming the first), and the lock tells a worker of the
 * same project how to join this server's Postgres; shutdown stops the web server and the
 * worker together, then the pools, and Postgres last, each step bounded, so no process
 * outlives this one and a SIGTERM ends it within seconds whatever is queued.
 */
import path from "node:path";
import { EMBEDDED_DATABASE, EMBEDDED_USER, ensureDatabase, PostgresInUseError } from "@db/embedded";
import { closeDatabase, getDatabase } from "@db/instance";
import { runMigrations } from "@db/migrate";
import nextEnv from "@next/env";
import { closeBackend, getBackend } from "@/backends/instance";
import { type Env, readEnv } from "@/config/env";
import { type Logger, log } from "@/config/log";
import { drainSettingsFromEnv } from "@/engine/run-cancel-drain";
import { type RunCancelLoop, startRunCancelLoop } from "@/engine/run-cancel-loop";
import { closeEventHub } from "@/events/instance";
import type { FlushHandle } from "@/metrics/flush-loop";
import { startMetricsFlush } from "@/runtime/metrics-flush";
import { closeRequestLimiter } from "@/runtime/request-limiter";
import { ensureSecretKey, secretKeyId } from "@/security/secret-key";
import { initTracing, shutdownTracing } from "@/tracing/init";
import { type DefaultAccess, ensureDefaultAccess } from "./bootstrap";
import { surviveDatabaseLoss } from "./crash-policy";
import {
  DataDirInUseError,
  type DataDirLock,
  LOCK_FILE,
  lockDataDir,
  shownDataDir,
} from "./data-dir-lock";
import { joinedWorkersGone } from "./join-embedded";
import { ensureNextBuild } from "./next-build";
import { type SupervisedPostgres, startSupervisedPostgres } from "./postgres-supervisor";
import { seedDemo } from "./seed";
import { createWebServer, type WebServer } from "./web-server";
import { type RunningWorker, startWorker } from "./worker-runtime";

const say = (line: string) => process.stdout.write(`[cellflow] ${line}\n`);

/** How long requests still running at shutdown may take before their connections are cut. */
const REQUEST_GRACE_MS = 3_000;
/** Past this, whatever still hangs is abandoned: Postgres is stopped and the process exits. */
const SHUTDOWN_DEADLINE_MS = 30_000;
/** How long joined workers get to stop (they read the lock every 250 ms, then hand back). */
const JOINED_WORKERS_GRACE_MS = 5_000;

export interface ServerOptions {
  /** Next.js's dev server (recompiles on change) instead of the built app. */
  dev: boolean;
}

/** What start-up and shutdown share: fixed once the environment is read. */
interface ServerSetting {
  opts: ServerOptions;
  root: string;
  env: Env;
  dataDir: string;
  shownDir: string;
  logger: Logger;
}

/** What has been started so far: shutdown stops whatever is there when it runs. */
interface ServerParts {
  lock?: DataDirLock;
  postgres?: SupervisedPostgres;
  web?: WebServer;
  worker?: RunningWorker;
  /** The process's metrics flush (shared with the worker in this process). */
  metrics?: FlushHandle;
  /** trigger.dev only: cancels the runs Stops left in the outbox, after their responses. */
  cancelDrainer?: RunCancelLoop;
  /** The dev server only: its bundler and file watchers, which a built app does not have. */
  nextApp?: { close(): Promise<void> };
  shuttingDown: boolean;
}

type Shutdown = (why: string, exitCode?: number) => Promise<void>;

export async function runServer(opts: ServerOptions): Promise<void> {
  const started = Date.now();
  const root = process.cwd();
  prepareProcess(root, opts.dev);
  const env = readEnv();
  const dataDir = path.resolve(root, env.CELLFLOW_DATA_DIR);
  const shownDir = shownDataDir(root, dataDir);
  const logger = log().child({ component: "server" });
  surviveDatabaseLoss(logger);
  const setting: ServerSetting = { opts, root, env, dataDir, shownDir, logger };

  // First, before anything in the folder is touched: a live server there keeps it.
  const parts: ServerParts = {
    lock: lockDataDirOrExit(env, dataDir, shownDir),
    shuttingDown: false,
  };
  const shutdown = makeShutdown(parts, logger);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => void shutdown(signal));
  }

  try {
    // OTEL_EXPORTER_OTLP_ENDPOINT set: traces, registered before Next.js loads.
    await initTracing("server");
    const access = await startBackEnd(setting, parts, shutdown);
    const demo = await seedDemo({
      db: getDatabase().db,
      workspaceId: access.workspaceId,
      log: logger,
      backend: getBackend(),
    });
    if (demo) say(`seeded a demo table (${demo}); its cells fill in the background`);
    await startWebApp(setting, parts, access, started);
  } catch (err) {
    await abandonStartUp(parts, logger, err);
  }
}

/** Environment and output settings that must hold before Next.js or anything else loads. */
function prepareProcess(root: string, dev: boolean): void {
  // Next.js's own rules: `.env.development*` in dev, `.env.production*` otherwise.
  nextEnv.loadEnvConfig(root, dev, { info: () => {}, error: console.error });
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  // Next.js's dev server needs NODE_ENV=development, whatever the shell says (`next dev`
  // sets it too): with another value it writes a wrong types path into tsconfig.json,
  // which also makes the next `npm start` rebuild. Set before Next.js loads.
  if (dev) Object.assign(process.env, { NODE_ENV: "development" });
  // Output piped into a program that has gone (`npm run dev | tee`, ended by Ctrl-C) makes
  // every write fail with EPIPE. Unhandled, each failure is an uncaught error that Next.js
  // logs to the same broken pipe, and so on forever; dropped here, the shutdown goes on.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
  }
}

/** The data folder's lock (embedded Postgres only); a live server holding it ends this one. */
function lockDataDirOrExit(env: Env, dataDir: string, shownDir: string): DataDirLock | undefined {
  if (env.DATABASE_URL) return undefined;
  let lock: DataDirLock | undefined;
  try {
    lock = lockDataDir(dataDir, shownDir);
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    say(`start-up refused: ${err.message}`);
    process.exit(1);
  }
  // Whatever way the process ends from here; a SIGKILL leaves a stale lock, taken over next time.
  process.once("exit", () => lock?.release());
  return lock;
}

/**
 * Stops the web server and the worker together, then the joined workers, the pools, and
 * Postgres last; runs once, whoever calls it first (a signal, or Postgres given up on).
 */
function makeShutdown(parts: ServerParts, logger: Logger): Shutdown {
  return async (why, exitCode = 0) => {
    if (parts.shuttingDown) return;
    parts.shuttingDown = true;
    say(`${why}: shutting down`);
    const t0 = Date.now();
    // Workers that joined this server's Postgres (npm run worker) stop on this, while it is up.
    parts.lock?.publish({ stopping: true });
    // A deadline for the graceful part: whatever hangs, Postgres is still stopped and the
    // process still exits, so nothing outlives it.
    setTimeout(() => {
      say(
        `graceful shutdown took over ${SHUTDOWN_DEADLINE_MS / 1000} s; stopping Postgres and exiting`,
      );
      void (parts.postgres?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
    }, SHUTDOWN_DEADLINE_MS);
    const step = (what: string, run: () => Promise<unknown> | undefined, bound: number) =>
      boundedShutdownStep(logger, what, run, bound);
    // Together: the worker hands its running cells back while requests finish.
    await Promise.all([
      step("the web server", () => parts.web?.close(REQUEST_GRACE_MS), REQUEST_GRACE_MS + 1_000),
      step("the worker", () => parts.worker?.stop(), 4_000),
      // What it had taken and not finished is taken over by the next drainer.
      step("the run-cancel drainer", () => parts.cancelDrainer?.stop(), 2_000),
      ...(parts.nextApp ? [step("the dev server", () => parts.nextApp?.close(), 3_000)] : []),
    ]);
    // Workers that joined (npm run worker) saw `stopping` in the lock: let them hand back.
    if (parts.postgres && process.env.DATABASE_URL) {
      const url = process.env.DATABASE_URL;
      await step("the joined workers", () => joinedWorkersGone(url), JOINED_WORKERS_GRACE_MS);
    }
    // Its last flush, and its rows retired, while the database is up.
    await step("the metrics flush", () => parts.metrics?.stop(), 1_000);
    await step("the traces", () => shutdownTracing(), 2_000);
    await step("the task backend", () => closeBackend(), 1_000);
    await step("the event hub", () => closeEventHub(), 1_000);
    await step("the request rate limiter", () => closeRequestLimiter(), 1_000);
    await step("the database pool", () => closeDatabase(), 1_000);
    await step("PostgreSQL", () => parts.postgres?.stop(), 20_000);
    parts.lock?.release();
    say(`stopped in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    process.exit(exitCode);
  };
}

/**
 * One shutdown step with a bound: one that hangs is reported and skipped, so Postgres is
 * always stopped and the process always ends.
 */
async function boundedShutdownStep(
  logger: Logger,
  what: string,
  run: () => Promise<unknown> | undefined,
  bound: number,
): Promise<void> {
  const t = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), bound);
  });
  const outcome = await Promise.race([
    Promise.resolve(run()).catch((err: unknown) =>
      logger.warn({ err }, `${what} failed during shutdown`),
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  const ms = Date.now() - t;
  logger.info({ step: what, ms, timedOut: outcome === "timeout" }, "shutdown step");
  if (outcome === "timeout") say(`${what} did not stop within ${bound / 1000} s; moving on`);
  else if (ms > 1_000) say(`${what} took ${(ms / 1000).toFixed(1)} s to stop`);
}

/**
 * Postgres, the secret key, the join information in the lock, migrations, the default
 * access, then the worker (or, with trigger.dev, the run-cancel drainer).
 */
async function startBackEnd(
  setting: ServerSetting,
  parts: ServerParts,
  shutdown: Shutdown,
): Promise<DefaultAccess> {
  const { env, dataDir, logger } = setting;
  if (!env.DATABASE_URL) await startEmbeddedPostgres(setting, parts, shutdown);
  publishJoinInfo(setting, parts.lock);
  const databaseUrl = process.env.DATABASE_URL ?? "";
  await runMigrations(env.DATABASE_URL_UNPOOLED ?? databaseUrl);
  const access = await ensureDefaultAccess(getDatabase().db, dataDir, env.CELLFLOW_API_KEY);
  // Before the worker: the process is the server, and the worker in it shares this loop.
  parts.metrics = startMetricsFlush({
    db: getDatabase().db,
    kind: "server",
    log: logger,
    everyMs: env.CELLFLOW_METRICS_FLUSH_MS,
  });
  // With trigger.dev, carriers run there (src/trigger); this process only serves.
  parts.worker =
    env.TASK_BACKEND === "trigger"
      ? undefined
      : await startWorker({
          url: databaseUrl,
          sessionUrl: env.DATABASE_URL_UNPOOLED ?? databaseUrl,
          driver: env.DATABASE_DRIVER,
          neonWsProxy: env.NEON_WS_PROXY,
          concurrency: env.WORKER_CONCURRENCY,
          env,
          log: logger,
        });
  if (!parts.worker) {
    say("TASK_BACKEND=trigger: rows are carried by trigger.dev runs, no local worker");
    parts.cancelDrainer = startRunCancelLoop({
      db: getDatabase().db,
      backend: getBackend(),
      log: logger.child({ component: "run-cancels" }),
      settings: drainSettingsFromEnv(env),
    });
  }
  return access;
}

/** The embedded Postgres, supervised (a lost one is restarted, or the server shuts down). */
async function startEmbeddedPostgres(
  { env, dataDir, shownDir, logger }: ServerSetting,
  parts: ServerParts,
  shutdown: Shutdown,
): Promise<void> {
  parts.postgres = await startSupervisedPostgres({
    dataDir,
    port: env.CELLFLOW_PG_PORT,
    log: (line) => logger.debug({ postgres: line }),
    logger,
    say,
    onGiveUp: (reason) => {
      say(`${reason}; the server cannot run without it`);
      void shutdown("PostgreSQL lost", 1);
    },
  });
  process.env.DATABASE_URL = await ensureDatabase(parts.postgres.current().url, EMBEDDED_DATABASE);
  say(`embedded PostgreSQL on 127.0.0.1:${env.CELLFLOW_PG_PORT} (data in ${shownDir}/pg)`);
}

/** The secret key into the environment, and what a joining worker needs into the lock. */
function publishJoinInfo(
  { env, dataDir, shownDir }: ServerSetting,
  lock: DataDirLock | undefined,
): void {
  // Set before the web server loads: its webhook routes read the key from the environment.
  const secretKey = ensureSecretKey(dataDir, env.CELLFLOW_SECRET_KEY);
  process.env.CELLFLOW_SECRET_KEY = secretKey.key;
  if (secretKey.source === "generated")
    say(`generated the key that encrypts webhook secrets (kept in ${shownDir}/secret-key)`);
  // What `npm run worker` in this project needs to join: never the password or the key.
  const published = lock?.publish({
    postgres: {
      host: "127.0.0.1",
      port: env.CELLFLOW_PG_PORT,
      user: EMBEDDED_USER,
      database: EMBEDDED_DATABASE,
    },
    secretKey: { id: secretKeyId(secretKey.key), fromEnv: secretKey.source === "env" },
  });
  if (published === false)
    say(`could not write ${shownDir}/${LOCK_FILE}: npm run worker cannot find this server`);
}

/** Next.js (built first if needed, or its dev server) behind our web server, listening. */
async function startWebApp(
  setting: ServerSetting,
  parts: ServerParts,
  access: DefaultAccess,
  started: number,
): Promise<void> {
  const { opts, root, env, logger } = setting;
  // Dev compiles each page on its first request (into .next/dev); start serves a build.
  const build = opts.dev ? "dev" : await ensureNextBuild(root, { say, out: process.stdout });
  const { default: next } = await import("next");
  const app = next({ dev: opts.dev, dir: root, hostname: env.HOST, port: env.PORT });
  await app.prepare();
  if (opts.dev) parts.nextApp = app;
  parts.web = createWebServer(app.getRequestHandler(), logger);
  const listening = parts.web.server;
  await new Promise<void>((resolve, reject) => {
    listening.once("error", reject);
    listening.listen(env.PORT, env.HOST, () => resolve());
  });
  const address = listening.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const url = `http://${env.HOST === "0.0.0.0" ? "localhost" : env.HOST}:${port}`;
  const readyIn = `ready in ${((Date.now() - started) / 1000).toFixed(1)} s (pid ${process.pid})`;
  say(
    build === "dev"
      ? `dev server (Next.js, hot reload); ${readyIn}`
      : `web app ${build === "built" ? "built" : "up to date"}; ${readyIn}`,
  );
  announceAccess(setting, access, url);
}

/** Where to open the app, and the key to use it with. */
function announceAccess({ opts, shownDir }: ServerSetting, access: DefaultAccess, url: string) {
  say(`URL:     ${url}`);
  // The key rides in the fragment: browsers never send it to the server or its logs,
  // and the sign-in page drops it from the address bar before using it.
  say(`open:    ${url}/signin#key=${encodeURIComponent(access.apiKey)}  (signs you in)`);
  const keyFrom = access.source === "env" ? "from CELLFLOW_API_KEY" : `kept in ${shownDir}/api-key`;
  say(`API key: ${access.apiKey}  (${access.source === "generated" ? "new; " : ""}${keyFrom})`);
  say(`try:     curl -H "Authorization: Bearer ${access.apiKey}" ${url}/api/tables`);
  if (opts.dev)
    say(
      "hot reload: pages and API routes under src/ recompile on save; the worker and src/server need a restart",
    );
}

/** A start-up that failed: what was started is stopped, Postgres last, and the process exits. */
async function abandonStartUp(parts: ServerParts, logger: Logger, err: unknown): Promise<void> {
  if (parts.shuttingDown) return;
  logger.error({ err }, "start-up failed");
  say(
    `start-up ${err instanceof PostgresInUseError ? "refused" : "failed"}: ${err instanceof Error ? err.message : String(err)}`,
  );
  await parts.worker?.stop().catch(() => {});
  await parts.cancelDrainer?.stop().catch(() => {});
  await closeDatabase().catch(() => {});
  await parts.postgres?.stop();
  parts.lock?.release();
  process.exit(1);
}
