/**
 * The composition root (src/runtime/engine.ts) both runtimes assemble the engine with:
 * what each runtime gets follows from its name, the rate limiter is the one the
 * environment selects and lives and dies with the runtime, and the maintenance jobs run
 * with the same handle and settings as the carriers.
 */
import { Writable } from "node:stream";
import { getDatabase } from "@db/instance";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import type { RateLimit, RateLimiter, Take } from "@/limits/rate/port";
import { assembleEngine, type EngineParts } from "@/runtime/engine";
import type { MaintenanceContext, MaintenanceJob } from "@/runtime/maintenance";
import { useTestDatabase } from "../helpers/db";
import { RecordingBackend } from "../helpers/engine-harness";

beforeAll(async () => {
  await useTestDatabase();
});

function parts(over: Partial<EngineParts> = {}): EngineParts {
  return {
    runtime: "local",
    env: readEnv({ ...process.env, RATE_LIMITER: undefined, REDIS_URL: undefined }),
    database: getDatabase(),
    backend: new RecordingBackend(),
    log: log(),
    ...over,
  };
}

/** A limiter that only counts how often it was closed. */
class ClosingLimiter implements RateLimiter {
  readonly kind = "postgres";
  closes = 0;
  async take(_key: string, _limit: RateLimit): Promise<Take> {
    return { ok: true, at: Date.now(), waitMs: 0, ticket: "t" };
  }
  async release(): Promise<void> {}
  async settle(): Promise<void> {}
  async coolDown(): Promise<void> {}
  async close(): Promise<void> {
    this.closes += 1;
  }
}

describe("the composition root", () => {
  it("gives the local worker chained carriers and trigger.dev one row per run with a shared limiter required", async () => {
    const local = assembleEngine(parts({ runtime: "local" }));
    const trigger = assembleEngine(parts({ runtime: "trigger" }));
    expect([local.engine.chain, local.engine.requireSharedLimiter]).toEqual([true, false]);
    expect([trigger.engine.chain, trigger.engine.requireSharedLimiter]).toEqual([false, true]);
    await Promise.all([local.close(), trigger.close()]);
  });

  it("builds the limiter the environment selects: Postgres by default, memory only when asked (with a warning)", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const byDefault = assembleEngine(parts({ log: pino(sink) }));
    expect(byDefault.engine.lines.limiter.kind).toBe("postgres");
    expect(lines).toEqual([]);
    const memory = assembleEngine(
      parts({ env: readEnv({ ...process.env, RATE_LIMITER: "memory" }), log: pino(sink) }),
    );
    expect(memory.engine.lines.limiter.kind).toBe("memory");
    expect(lines.join("")).toMatch(/RATE_LIMITER=memory: each process limits its own calls/);
    await Promise.all([byDefault.close(), memory.close()]);
  });

  it("closes its limiter once, however often the runtime is closed", async () => {
    const limiter = new ClosingLimiter();
    const engine = assembleEngine(parts({ limiter }));
    expect(engine.engine.lines.limiter).toBe(limiter);
    await Promise.all([engine.close(), engine.close()]);
    await engine.close();
    expect(limiter.closes).toBe(1);
  });

  it("runs a maintenance job with the carriers' handle and the runtime's settings", async () => {
    const env = readEnv({ ...process.env, EVENTS_RETENTION_HOURS: "5" });
    const engine = assembleEngine(parts({ env }));
    const seen: MaintenanceContext[] = [];
    const job: MaintenanceJob = {
      id: "probe",
      cron: "* * * * *",
      runtimes: ["local"],
      run: async (ctx) => {
        seen.push(ctx);
        return { probed: 1 };
      },
    };
    const signal = new AbortController().signal;
    expect(await engine.maintain(job, signal)).toEqual({ probed: 1 });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.engine).toBe(engine.engine);
    expect(seen[0]?.env.EVENTS_RETENTION_HOURS).toBe(5);
    expect(seen[0]?.signal).toBe(signal);
    await engine.close();
  });
});
