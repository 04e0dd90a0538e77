/**
 * Stop of running trigger.dev carriers, measured against the fake trigger.dev API (each
 * call answered after STOP_LATENCY_MS): how long the Stop takes to answer, and how long
 * until the platform has cancelled every run (the API process's drainer, default
 * settings unless TRIGGER_CANCEL_* say otherwise). The cells are seeded as running with
 * a run id each, as carriers' claims leave them; the rest is the real engine and Postgres.
 *
 *   node --import tsx bench/stop-cancel.ts          (STOP_RUNS=200, STOP_LATENCY_MS=50)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { queryRows } from "@db/client";
import { startEmbeddedPostgres } from "@db/embedded";
import { sql } from "drizzle-orm";
import type { TaskBackend } from "@/backends/port";
import { TriggerBackend } from "@/backends/trigger";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { sleep } from "@/domain/sleep";
import { startRun } from "@/engine/dispatcher";
import { drainSettingsFromEnv } from "@/engine/run-cancel-drain";
import { startRunCancelLoop } from "@/engine/run-cancel-loop";
import { stopRuns } from "@/engine/stop";
import { startFakeTrigger } from "../test/helpers/fake-trigger";
import { freePort } from "../test/helpers/processes";
import { benchDatabase, benchTable } from "./setup";

const RUNS = Number(process.env.STOP_RUNS ?? 200);
const LATENCY_MS = Number(process.env.STOP_LATENCY_MS ?? 50);
const say = (line: string) => process.stdout.write(`[stop-cancel] ${line}\n`);

/** Stamps cells without carrying them: the bench seeds them as running itself. */
const idle: TaskBackend = {
  kind: "local",
  remoteCancel: false,
  enqueue: async () => {},
  cancelRun: async () => ({ ok: true, value: "gone" }),
  close: async () => {},
};

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-stop-cancel-"));
  fs.chmodSync(dir, 0o777);
  const server = await startEmbeddedPostgres({ dataDir: dir, port: await freePort() });
  const fake = await startFakeTrigger();
  try {
    const { database } = await benchDatabase(server.url);
    const db = database.db;
    const tableId = await benchTable(
      database,
      ["a"],
      [
        {
          id: "g",
          definition: { inputs: [], blocks: [{ id: "w", type: "wait", ms: 10 }] },
          output: { columnId: "a", from: "w" },
        },
      ],
      Array.from({ length: RUNS }, () => ({})),
    );
    await startRun(
      { db: db, backend: idle },
      {
        tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: RUNS,
      },
    );
    const seeded = await queryRows<{ runId: string }>(
      db,
      sql`update cells set status = 'running', started_at = now(), run_id = 'run_' || row_position
           where table_id = ${tableId} returning run_id as "runId"`,
    );
    fake.addRuns(seeded.map((r) => r.runId));
    fake.latency(LATENCY_MS);
    const backend = new TriggerBackend({
      accessToken: "tr_dev_bench",
      baseURL: fake.url,
      log: log(),
    });
    const settings = drainSettingsFromEnv(readEnv());
    const loop = startRunCancelLoop({ db, backend, log: log(), settings });
    const t0 = performance.now();
    const stopped = await stopRuns({ db: db, backend }, { tableId });
    const answeredMs = performance.now() - t0;
    while (fake.cancelled.size < seeded.length) await sleep(5);
    const allCancelledMs = performance.now() - t0;
    await loop.stop();
    const calls = [...fake.cancelCalls.values()].reduce((a, b) => a + b, 0);
    say(
      `${seeded.length} running carriers, API latency ${LATENCY_MS} ms, concurrency ${settings.concurrency}, ` +
        `rate ${settings.ratePerSecond}/s (burst ${settings.burst})`,
    );
    say(`Stop answered in ${answeredMs.toFixed(0)} ms (cancelled ${stopped.cancelled} cells)`);
    say(
      `every run cancelled at the platform after ${allCancelledMs.toFixed(0)} ms; ${calls} cancel calls`,
    );
    await database.close();
  } finally {
    await fake.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
