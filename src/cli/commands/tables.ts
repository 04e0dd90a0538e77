/** `cellflow tables`: the key's tables as aligned columns (id, rows, name). */
import { parseCommand } from "../args";
import { call } from "../connection";
import { type CliContext, connect } from "../context";
import { type CliResult, done } from "../failure";
import { TABLES } from "../help";

export async function tablesCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand({ name: "tables", positionals: [], options: {} }, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${TABLES}\n`);
    return done;
  }
  const conn = connect(ctx);
  if (!conn.ok) return conn;
  const list = await call(conn.value, conn.value.client.GET("/api/tables"));
  if (!list.ok) return list;
  ctx.stdout.write(tableListing(list.value.tables));
  return done;
}

/**
 * One line per table under a header; the name last, so a long one never pushes columns.
 * AUTO is the table's auto-run switch: `off` means no group fires by itself.
 */
export function tableListing(
  tables: { id: string; name: string; rowCount?: number; autoRun?: boolean }[],
): string {
  if (tables.length === 0) return "no tables yet\n";
  const rows = tables.map((t) => [
    t.id,
    t.rowCount === undefined ? "" : String(t.rowCount),
    t.autoRun === undefined ? "" : t.autoRun ? "on" : "off",
    t.name,
  ]);
  const idWidth = Math.max(2, ...rows.map((r) => r[0]?.length ?? 0));
  const countWidth = Math.max(4, ...rows.map((r) => r[1]?.length ?? 0));
  const line = ([id = "", count = "", auto = "", name = ""]: string[]) =>
    `${id.padEnd(idWidth)}  ${count.padStart(countWidth)}  ${auto.padEnd(4)}  ${name}\n`;
  return line(["ID", "ROWS", "AUTO", "NAME"]) + rows.map(line).join("");
}
