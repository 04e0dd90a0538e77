/** `cellflow stop <table> …`: POST /runs/cancel scoped by the flags; prints the count. */
import type { Schemas } from "@/client/cellflow-client";
import { parseCommand } from "../args";
import { call } from "../connection";
import { type CliContext, connect } from "../context";
import { type CliResult, done } from "../failure";
import { STOP } from "../help";
import { findTable, pickPart, type Table } from "../table-ref";
import { whereOf } from "../where-args";

const STOP_SPEC = {
  name: "stop",
  positionals: ["table"],
  options: {
    run: { type: "string" },
    group: { type: "string", multiple: true },
    where: { type: "string", multiple: true },
    "where-json": { type: "string" },
  },
} as const;

export function stopRequest(
  table: Table,
  flags: { run?: string; group?: string[]; where?: string[]; "where-json"?: string },
): CliResult<Schemas["CancelRunsRequest"]> {
  const groupIds: string[] = [];
  for (const g of flags.group ?? []) {
    const group = pickPart(table.groups, g, "group", table);
    if (!group.ok) return group;
    groupIds.push(group.value.id);
  }
  const where = whereOf(table, flags.where ?? [], flags["where-json"]);
  if (!where.ok) return where;
  return {
    ok: true,
    value: {
      ...(flags.run ? { dispatchId: flags.run } : {}),
      ...(groupIds.length ? { groupIds } : {}),
      ...(where.value ? { where: where.value } : {}),
    },
  };
}

export async function stopCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(STOP_SPEC, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${STOP}\n`);
    return done;
  }
  const conn = connect(ctx);
  if (!conn.ok) return conn;
  const table = await findTable(conn.value, args.value.positionals[0] ?? "");
  if (!table.ok) return table;
  const body = stopRequest(table.value, args.value.values);
  if (!body.ok) return body;
  const answer = await call(
    conn.value,
    conn.value.client.POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: table.value.id } },
      body: body.value,
    }),
  );
  if (!answer.ok) return answer;
  const n = answer.value.cancelled;
  ctx.stdout.write(`stopped ${n} cell${n === 1 ? "" : "s"}\n`);
  return done;
}
