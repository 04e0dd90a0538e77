/**
 * Log lines for a person at a terminal: the time, the level, the message, then the
 * fields that say where (table, row, group, ...), coloured when the terminal takes
 * colour. The JSON line stays the record: anything that does not parse is passed on as
 * it came, and nothing of a line is dropped but the fields every line carries.
 */
import type { DestinationStream } from "pino";

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: "TRACE", colour: "90" },
  20: { name: "DEBUG", colour: "36" },
  30: { name: "INFO ", colour: "32" },
  40: { name: "WARN ", colour: "33" },
  50: { name: "ERROR", colour: "31" },
  60: { name: "FATAL", colour: "35" },
};

/** Fields every line carries or that the head already shows. */
const HIDDEN = new Set(["level", "time", "msg", "service", "pid", "hostname"]);

const paint = (on: boolean, code: string, text: string) =>
  on ? `\u001b[${code}m${text}\u001b[0m` : text;

function fieldText(value: unknown): string {
  if (typeof value === "string") return /[\s="]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as a readable one (an error's stack on the lines after it). */
export function prettyLine(line: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = LEVELS[Number(entry.level)] ?? { name: String(entry.level), colour: "0" };
  const time =
    typeof entry.time === "number" ? new Date(entry.time).toISOString().slice(11, 23) : "";
  const fields: string[] = [];
  let stack: string | undefined;
  for (const [key, value] of Object.entries(entry)) {
    if (HIDDEN.has(key) || value === undefined) continue;
    if (key === "err" && value && typeof value === "object") {
      const err = value as { message?: unknown; stack?: unknown };
      fields.push(`err=${fieldText(err.message ?? value)}`);
      if (typeof err.stack === "string") stack = err.stack;
      continue;
    }
    fields.push(`${key}=${fieldText(value)}`);
  }
  const head = `${paint(colour, "90", time)} ${paint(colour, level.colour, level.name)} ${String(entry.msg ?? "")}`;
  const tail = fields.length > 0 ? ` ${paint(colour, "90", fields.join(" "))}` : "";
  return `${head}${tail}${stack ? `\n${paint(colour, "90", stack)}` : ""}`;
}

/** A pino destination that writes pretty lines to `out` (stdout by default). */
export function prettyDestination(
  out: { write(text: string): unknown } = process.stdout,
  colour = process.stdout.isTTY === true && !process.env.NO_COLOR,
): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split("\n")) if (line) out.write(`${prettyLine(line, colour)}\n`);
    },
  };
}
