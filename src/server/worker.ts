/**
 * `npm run worker`: a worker process on its own, against DATABASE_URL (several may run
 * against one database). SIGINT/SIGTERM finish running carriers' current step and exit.
 */
import nextEnv from "@next/env";
import { runMigrations } from "../../db/migrate";
import { readEnv } from "../config/env";
import { log } from "../config/log";
import { surviveDatabaseLoss } from "./crash-policy";
import { startWorker } from "./worker-runtime";

nextEnv.loadEnvConfig(process.cwd(), false, { info: () => {}, error: console.error });

async function main(): Promise<void> {
  surviveDatabaseLoss(log());
  const env = readEnv();
  const direct = env.DATABASE_URL_UNPOOLED ?? env.DATABASE_URL;
  if (!direct) {
    process.stderr.write(
      "DATABASE_URL is not set: point the worker at the database `npm start` uses\n",
    );
    process.exit(2);
  }
  await runMigrations(direct);
  const worker = await startWorker({
    url: env.DATABASE_URL ?? direct,
    sessionUrl: direct,
    driver: env.DATABASE_DRIVER,
    neonWsProxy: env.NEON_WS_PROXY,
    concurrency: env.WORKER_CONCURRENCY,
    redriveEveryMs: env.CELLFLOW_REDRIVE_EVERY_MS,
    eventsRetentionHours: env.EVENTS_RETENTION_HOURS,
    log: log(),
  });
  process.stdout.write(`[cellflow] worker ready (pid ${process.pid})\n`);
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
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
    });
  }
}

void main();
