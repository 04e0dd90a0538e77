/**
 * `cellflow export <table>`: the table's CSV piped to stdout as it streams, at the pace
 * stdout takes it. A reader that stops early (`| head`) ends the export quietly.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { parseCommand } from "../args";
import { refusalOf } from "../connection";
import { type CliContext, connect } from "../context";
import { apiError, type CliResult, done } from "../failure";
import { EXPORT } from "../help";
import { findTable } from "../table-ref";

export async function exportCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand({ name: "export", positionals: ["table"], options: {} }, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${EXPORT}\n`);
    return done;
  }
  const conn = connect(ctx);
  if (!conn.ok) return conn;
  const table = await findTable(conn.value, args.value.positionals[0] ?? "");
  if (!table.ok) return table;
  const res = await conn.value.request(`/api/tables/${encodeURIComponent(table.value.id)}/export`);
  if (!res.ok) return res;
  if (!res.value.ok) return { ok: false, reason: await refusalOf(res.value) };
  if (!res.value.body) return done;
  try {
    await pipeline(Readable.fromWeb(res.value.body as NodeReadableStream<Uint8Array>), ctx.stdout, {
      end: false,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EPIPE") return done;
    const why = err instanceof Error ? err.message : String(err);
    return apiError(`the export was cut off: ${why}`);
  }
  return done;
}
