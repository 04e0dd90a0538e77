/**
 * `cellflow events <table> [--after n]`: the table's event stream, one JSON line per event
 * (`{"id","event","data"}`), until Ctrl-C. Reconnects resume after the last line printed,
 * so no event is printed twice or skipped; a note on stderr says when it reconnects.
 */
import { parseCommand, wholeNumber } from "../args";
import { type CliContext, connect, writeOut } from "../context";
import { tailEvents } from "../event-stream";
import { type CliResult, done } from "../failure";
import { EVENTS } from "../help";
import { findTable } from "../table-ref";

const EVENTS_SPEC = {
  name: "events",
  positionals: ["table"],
  options: { after: { type: "string" } },
} as const;

export async function eventsCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(EVENTS_SPEC, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${EVENTS}\n`);
    return done;
  }
  const after = wholeNumber("after", args.value.values.after, 0);
  if (!after.ok) return after;
  const conn = connect(ctx);
  if (!conn.ok) return conn;
  const table = await findTable(conn.value, args.value.positionals[0] ?? "");
  if (!table.ok) return table;
  ctx.claimInterrupt();
  return tailEvents({
    conn: conn.value,
    tableId: table.value.id,
    ...(after.value !== undefined ? { after: after.value } : {}),
    signal: ctx.interrupted,
    onEvent: (e) => writeOut(ctx.stdout, `${JSON.stringify(e)}\n`),
    onReconnect: (why) =>
      ctx.stderr.write(`cellflow: event stream dropped (${why}); reconnecting\n`),
  });
}
