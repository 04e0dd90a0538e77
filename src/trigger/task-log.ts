/**
 * Inside trigger.dev runs, the engine's pino lines go to the SDK's `logger`, so each shows
 * in the run's log view at its level with its fields (table, row, group, execution and
 * run ids, errors) as attributes. Guarantees: every line pino writes reaches exactly one
 * of `debug/info/warn/error` (fatal counts as error, trace as debug); pino still decides
 * the level (LOG_LEVEL) and redacts secrets before a line leaves. Outside tasks pino
 * writes to stdout as before (src/config/log.ts).
 */
import { logger } from "@trigger.dev/sdk";
import type { DestinationStream } from "pino";
import { type Logger, setLogDestination } from "@/config/log";

export type TaskLogSink = Pick<typeof logger, "debug" | "info" | "warn" | "error">;

/** pino's own bookkeeping: the run's log view has its own time and process. */
const NOT_FIELDS = new Set(["level", "time", "msg", "pid", "hostname", "service"]);

/** pino's numeric levels: 10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal. */
function methodFor(level: unknown): keyof TaskLogSink {
  const n = typeof level === "number" ? level : 30;
  return n >= 50 ? "error" : n >= 40 ? "warn" : n >= 30 ? "info" : "debug";
}

/** A pino destination that hands each JSON line to `sink` as (message, fields). */
export function taskLogDestination(sink: TaskLogSink = logger): DestinationStream {
  return {
    write(line: string) {
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        // Not pino's JSON (cannot happen with this logger's options): keep the text.
        sink.info(line.trimEnd());
        return;
      }
      if (typeof entry !== "object" || entry === null) {
        sink.info(line.trimEnd());
        return;
      }
      const record = entry as Record<string, unknown>;
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record))
        if (!NOT_FIELDS.has(key)) fields[key] = value;
      const method = methodFor(record.level);
      const message = typeof record.msg === "string" ? record.msg : method;
      sink[method](message, fields);
    },
  };
}

/**
 * Makes the process logger write to the run's log view (call once per task process, before
 * anything takes a child of it), and returns it.
 */
export function logToTaskRun(sink: TaskLogSink = logger): Logger {
  return setLogDestination(taskLogDestination(sink));
}
