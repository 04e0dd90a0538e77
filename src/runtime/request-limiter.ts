/**
 * The rate lines of a process's request side (the web app), for the paid calls a request
 * makes itself: a workflow's test run (`POST /api/workflows/:id/test`). Built the way the
 * engine's composition root builds a worker's (the limiter the environment selects, over
 * the process's database), once per database: the shared limiters (Postgres, Redis,
 * Upstash) keep one limit for the calls of the web app and of every worker together.
 * Kept on globalThis, like the database and the task backend, because Next.js may load
 * this module more than once and every copy must share one line per key.
 */
import type { Database } from "@db/client";
import { getDatabase } from "@db/instance";
import { readEnv } from "@/config/env";
import { limiterFromEnv } from "@/limits/rate/instance";
import { RateLines } from "@/limits/rate/line";

const holder = globalThis as { __cellflowRequestLines?: { database: Database; lines: RateLines } };

export function requestRateLines(): RateLines {
  const database = getDatabase();
  const held = holder.__cellflowRequestLines;
  if (held?.database === database) return held.lines;
  // The database was replaced (a test's own): its limiter went with it.
  if (held) void held.lines.limiter.close().catch(() => undefined);
  const lines = new RateLines(limiterFromEnv(readEnv(), database.sessionDb));
  holder.__cellflowRequestLines = { database, lines };
  return lines;
}

export async function closeRequestLimiter(): Promise<void> {
  const held = holder.__cellflowRequestLines;
  holder.__cellflowRequestLines = undefined;
  await held?.lines.limiter.close();
}
