import pino, { type DestinationStream, type Level, type Logger } from "pino";
import { readEnv } from "./env";
import { prettyDestination } from "./log-pretty";

export type { Logger };

const globalLog = globalThis as { __cellflowLog?: Logger };

function create(destination?: DestinationStream, level?: Level): Logger {
  const options = {
    level: level ?? readEnv().LOG_LEVEL,
    base: { service: "cellflow" },
    redact: { paths: ["req.headers.authorization", "*.apiKey", "*.secret"], censor: "[redacted]" },
  };
  if (destination) return pino(options, destination);
  // A person at a terminal gets readable lines; a pipe, a file or a collector gets JSON.
  const format = readEnv().LOG_FORMAT ?? (process.stdout.isTTY ? "pretty" : "json");
  return format === "pretty" ? pino(options, prettyDestination()) : pino(options);
}

/**
 * The process logger: JSON lines on stdout, or readable lines on a terminal (LOG_FORMAT);
 * children carry table/row/group/execution ids.
 */
export function log(): Logger {
  globalLog.__cellflowLog ??= create();
  return globalLog.__cellflowLog;
}

/**
 * Sends the process logger's lines to `destination` from now on (tests read what was
 * logged). Children already made keep the logger they were made from, so call this before
 * starting what logs (a worker takes its logger when it starts).
 */
export function setLogDestination(destination: DestinationStream, level?: Level): Logger {
  globalLog.__cellflowLog = create(destination, level);
  return globalLog.__cellflowLog;
}
