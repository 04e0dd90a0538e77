/**
 * Inside trigger.dev tasks the engine's log lines go through the SDK's `logger`, so they
 * appear in the run's log view at their level with their fields: a recording task logger
 * stands where trigger.dev installs its own, and a carrier task runs on a real row with
 * the deps it builds from the environment, as on a deploy.
 */

import { runInMockTaskContext } from "@trigger.dev/core/v3/test";
import { logger } from "@trigger.dev/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASKS } from "@/backends/port";
import { log } from "@/config/log";
import { apiClient } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts } from "../helpers/engine";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";
import { catalogTask, installTaskCatalog } from "../helpers/trigger-catalog";

type TaskLogger = Parameters<typeof logger.setGlobalTaskLogger>[0];
type Level = "debug" | "log" | "info" | "warn" | "error";
interface Line {
  level: Level;
  message: string;
  fields: Record<string, unknown>;
}

const lines: Line[] = [];
const record =
  (level: Level) =>
  (message: string, fields: Record<string, unknown> = {}) =>
    lines.push({ level, message, fields });
const recorder: TaskLogger = {
  debug: record("debug"),
  log: record("log"),
  info: record("info"),
  warn: record("warn"),
  error: record("error"),
  trace: (_name, fn) => fn({} as Parameters<typeof fn>[0]),
  startSpan: () => {
    throw new Error("not used");
  },
};

let key: string;
let fake: FakeTrigger;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  fake = await startFakeTrigger();
  // What a deployed run has: its key and API from trigger.dev.
  process.env.TRIGGER_SECRET_KEY = "tr_dev_t";
  process.env.TRIGGER_API_URL = fake.url;
  // Where trigger.dev's run worker installs its OpenTelemetry task logger.
  logger.setGlobalTaskLogger(recorder);
  installTaskCatalog();
  await import("@/trigger/row-carrier");
});
afterAll(async () => {
  logger.disable();
  await fake.close();
});

describe("engine logs inside trigger.dev tasks", () => {
  it("a carrier run's lines reach the SDK logger with the table, row, group, execution and run ids", async () => {
    const t = await waitTable(key, { groups: 1, ms: 5, rows: 1 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    const rowId = t.rowIds[0] as string;
    lines.length = 0;
    // Pushed on deploy; set only now so the API calls above stay quiet.
    process.env.LOG_LEVEL = "debug";
    await runInMockTaskContext(
      async ({ ctx }) => {
        // No deps seeded: the task builds its own from the environment, as deployed.
        const task = catalogTask(TASKS.carrier);
        const payload = { tableId: t.id, rowId };
        const parsed = task.fns.parsePayload ? await task.fns.parsePayload(payload) : payload;
        await task.fns.run(parsed, { ctx, signal: new AbortController().signal });
      },
      { ctx: { run: { id: "run_log_1" } } },
    );
    expect(await cellCounts(t.id)).toEqual({ completed: 1 });
    const ended = lines.find((l) => l.message === "attempt ended");
    expect(ended).toMatchObject({
      level: "debug",
      fields: {
        component: "trigger-task",
        tableId: t.id,
        rowId,
        runId: "run_log_1",
        groupId: "g0",
        executionId: expect.any(String),
        end: "completed",
      },
    });
    // pino's bookkeeping stays out of the fields: the log view has its own.
    expect(Object.keys(ended?.fields ?? {})).not.toContain("time");
    expect(Object.keys(ended?.fields ?? {})).not.toContain("level");
  });

  it("every pino level maps to one SDK level, errors keep their message and secrets stay redacted", () => {
    lines.length = 0;
    log().level = "trace";
    const child = log().child({ tableId: "t1" });
    child.trace("a trace");
    child.debug("a debug");
    child.info("an info");
    child.warn({ err: new Error("boom") }, "a warn");
    child.error({ provider: { apiKey: "sk-secret" } }, "an error");
    child.fatal("a fatal");
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ["debug", "a trace"],
      ["debug", "a debug"],
      ["info", "an info"],
      ["warn", "a warn"],
      ["error", "an error"],
      ["error", "a fatal"],
    ]);
    expect(lines[3]?.fields).toMatchObject({ tableId: "t1", err: { message: "boom" } });
    expect(lines[4]?.fields).toMatchObject({ provider: { apiKey: "[redacted]" } });
    expect(JSON.stringify(lines)).not.toContain("sk-secret");
  });
});
