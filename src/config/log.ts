import pino, { type Logger } from "pino";
import { readEnv } from "./env";

export type { Logger };

const globalLog = globalThis as { __cellflowLog?: Logger };

/** The process logger: JSON lines on stdout; children carry table/row/group/execution ids. */
export function log(): Logger {
  globalLog.__cellflowLog ??= pino({
    level: readEnv().LOG_LEVEL,
    base: { service: "cellflow" },
    redact: { paths: ["req.headers.authorization", "*.apiKey", "*.secret"], censor: "[redacted]" },
  });
  return globalLog.__cellflowLog;
}
