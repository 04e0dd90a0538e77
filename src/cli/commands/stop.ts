/** `cellflow stop <table> …`: POST /runs/cancel scoped by the flags; prints the count. */
import type { Schemas } from "@/client/cellflow-client";
import { parseCommand } from "../args";
import { call } from "../connection";
import type { CliContext } from "../context";
import { type CliResult, done } from "../failure";
import { STOP } from "../help";
import { commandTable, type ScopeFlags, scopeOf } from "../scope-args";
import type { Table } from "../table-ref";

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
  flags: ScopeFlags & { run?: string },
): CliResult<Schemas["CancelRunsRequest"]> {
  const scope = scopeOf(table, flags);
  if (!scope.ok) return scope;
  return { ok: true, value: { ...(flags.run ? { dispatchId: flags.run } : {}), ...scope.value } };
}

export async function stopCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(STOP_SPEC, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${STOP}\n`);
    return done;
  }
  const found = await commandTable(ctx, args.value.positionals[0] ?? "");
  if (!found.ok) return found;
  const { conn, table } = found.value;
  const body = stopRequest(table, args.value.values);
  if (!body.ok) return body;
  const answer = await call(
    conn,
    conn.client.POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: table.id } },
      body: body.value,
    }),
  );
  if (!answer.ok) return answer;
  const n = answer.value.cancelled;
  ctx.stdout.write(`stopped ${n} cell${n === 1 ? "" : "s"}\n`);
  return done;
}
