/**
 * `cellflow rows delete <table> …`: POST /rows/delete with the rows the flags name (at
 * least one condition: no flag never means every row); prints the count.
 */
import type { Schemas } from "@/client/cellflow-client";
import { parseCommand } from "../args";
import { call } from "../connection";
import type { CliContext } from "../context";
import { type CliResult, done, usageError } from "../failure";
import { ROWS } from "../help";
import { commandTable } from "../scope-args";
import type { Table } from "../table-ref";
import { whereOf } from "../where-args";

const ROWS_SPEC = {
  name: "rows",
  positionals: ["action", "table"],
  options: {
    where: { type: "string", multiple: true },
    "where-json": { type: "string" },
  },
} as const;

export function deleteRowsRequest(
  table: Table,
  flags: { where?: string[]; "where-json"?: string },
): CliResult<{ where: Schemas["WhereCondition"][] }> {
  const where = whereOf(table, flags.where ?? [], flags["where-json"]);
  if (!where.ok) return where;
  if (!where.value)
    return usageError("rows delete: name the rows with --where or --where-json", [
      "cellflow rows --help",
    ]);
  return { ok: true, value: { where: where.value } };
}

export async function rowsCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(ROWS_SPEC, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${ROWS}\n`);
    return done;
  }
  const [action, ref] = args.value.positionals;
  if (action !== "delete")
    return usageError(`rows: unknown action "${action ?? ""}" (delete)`, ["cellflow rows --help"]);
  const found = await commandTable(ctx, ref ?? "");
  if (!found.ok) return found;
  const { conn, table } = found.value;
  const body = deleteRowsRequest(table, args.value.values);
  if (!body.ok) return body;
  const answer = await call(
    conn,
    conn.client.POST("/api/tables/{id}/rows/delete", {
      params: { path: { id: table.id } },
      body: body.value,
    }),
  );
  if (!answer.ok) return answer;
  const n = answer.value.deleted;
  ctx.stdout.write(`deleted ${n} row${n === 1 ? "" : "s"}\n`);
  return done;
}
