/**
 * A process of pacers for the cross-process rate-limit test: PACERS concurrent loops,
 * each pacing GRANTS_EACH calls on KEY in this process's line (as cells do) through the
 * limiter the environment selects (REDIS_URL, else Postgres at DATABASE_URL), starting at START_AT (epoch ms). Prints
 * one JSON line: every call's slot (its store's clock, epoch ms — what the limit is
 * about; the call goes once its slot comes) and each wait.
 */

import { createDatabase } from "@db/client";
import { readEnv } from "@/config/env";
import { sleep } from "@/domain/sleep";
import { paceBaseMs } from "@/limits/rate/hook";
import { limiterFromEnv, limiterKind } from "@/limits/rate/instance";
import { RateLines } from "@/limits/rate/line";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const pacers = num("PACERS", 25);
const each = num("GRANTS_EACH", 1);
const limit = { limit: num("LIMIT", 10), windowMs: num("WINDOW_MS", 1_000) };
const key = process.env.KEY ?? "ws:provider";
const startAt = num("START_AT", Date.now());

async function main(): Promise<void> {
  const env = readEnv();
  const database =
    limiterKind(env) === "postgres" && env.DATABASE_URL
      ? createDatabase({
          url: env.DATABASE_URL,
          driver: env.DATABASE_DRIVER,
          neonWsProxy: env.NEON_WS_PROXY,
        })
      : undefined;
  const limiter = limiterFromEnv(env, database?.db);
  const lines = new RateLines(limiter);
  const grants: number[] = [];
  const waits: number[] = [];
  await sleep(Math.max(0, startAt - Date.now()));
  await Promise.all(
    Array.from({ length: pacers }, async () => {
      for (let i = 0; i < each; i++) {
        const asked = Date.now();
        grants.push(
          await lines.pace(key, limit, {
            baseMs: paceBaseMs(limit.limit),
            maxMs: 1_000,
          }),
        );
        waits.push(Date.now() - asked);
      }
    }),
  );
  await limiter.close();
  await database?.close();
  process.stdout.write(`${JSON.stringify({ grants, waits })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
