/**
 * `cellflow run <table> …`: one POST /runs built from the flags (groups and columns named
 * by id or name, `--where` values read as their column's type), then either the run's id,
 * the dry run's figures, or with `--follow` its progress to the end. Ctrl-C while
 * following detaches and leaves the run going, saying how to stop it. Each invocation sends
 * an `Idempotency-Key` of its own, so the request is safe to repeat.
 */
import { randomUUID } from "node:crypto";
import type { Schemas } from "@/client/cellflow-client";
import { RUN_MODES } from "@/domain/statuses";
import { creditAmount, parseCommand, wholeNumber } from "../args";
import { type Connection, call } from "../connection";
import type { CliContext } from "../context";
import { type CliResult, done, EXIT, shellWord, usageError } from "../failure";
import { followRun } from "../follow";
import { RUN } from "../help";
import { runEnd } from "../progress";
import { commandTable, type ScopeFlags, scopeOf } from "../scope-args";
import type { Table } from "../table-ref";

export const RUN_SPEC = {
  name: "run",
  positionals: ["table"],
  options: {
    group: { type: "string", multiple: true },
    mode: { type: "string" },
    where: { type: "string", multiple: true },
    "where-json": { type: "string" },
    limit: { type: "string" },
    resume: { type: "boolean" },
    "stale-after-hours": { type: "string" },
    "max-credits": { type: "string" },
    "max-credits-per-row": { type: "string" },
    "dry-run": { type: "boolean" },
    follow: { type: "boolean" },
  },
} as const;

export interface RunFlags extends ScopeFlags {
  mode?: string;
  limit?: string;
  resume?: boolean;
  "stale-after-hours"?: string;
  "max-credits"?: string;
  "max-credits-per-row"?: string;
  "dry-run"?: boolean;
  follow?: boolean;
}

/** The request the flags describe, against the table's schema (names → ids, values typed). */
export function runRequest(table: Table, flags: RunFlags): CliResult<Schemas["CreateRunRequest"]> {
  const mode = RUN_MODES.find((m) => m === (flags.mode ?? "incomplete"));
  if (!mode) return usageError(`--mode is one of ${RUN_MODES.join(", ")}, not "${flags.mode}"`);
  if (flags["dry-run"] && flags.follow)
    return usageError("--dry-run starts nothing, so there is nothing to --follow");
  const staleAfterHours = staleHours(mode, flags["stale-after-hours"]);
  if (!staleAfterHours.ok) return staleAfterHours;
  const scope = scopeOf(table, flags);
  if (!scope.ok) return scope;
  const limit = wholeNumber("limit", flags.limit, 1);
  if (!limit.ok) return limit;
  const maxCredits = creditAmount("max-credits", flags["max-credits"]);
  if (!maxCredits.ok) return maxCredits;
  const perRow = creditAmount("max-credits-per-row", flags["max-credits-per-row"]);
  if (!perRow.ok) return perRow;
  return {
    ok: true,
    value: {
      mode,
      ...scope.value,
      ...(limit.value !== undefined ? { limit: limit.value } : {}),
      ...(maxCredits.value !== undefined ? { maxCredits: maxCredits.value } : {}),
      ...(perRow.value !== undefined ? { maxCreditsPerRow: perRow.value } : {}),
      ...(flags.resume ? { resume: true } : {}),
      ...(staleAfterHours.value !== undefined ? { staleAfterHours: staleAfterHours.value } : {}),
      ...(flags["dry-run"] ? { dryRun: true } : {}),
    },
  };
}

/** `--stale-after-hours`: required by `--mode stale` (hours > 0), refused with any other. */
function staleHours(mode: string, raw: string | undefined): CliResult<number | undefined> {
  if (mode !== "stale") {
    if (raw === undefined) return { ok: true, value: undefined };
    return usageError("--stale-after-hours goes with --mode stale");
  }
  const n = Number(raw);
  if (raw === undefined || raw.trim() === "" || !Number.isFinite(n) || n <= 0)
    return usageError(
      `--mode stale needs --stale-after-hours <h>, a number of hours > 0${raw === undefined ? "" : `, not "${raw}"`}`,
    );
  return { ok: true, value: n };
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

export function estimateText(e: Schemas["RunEstimate"], table: Table): string {
  const atLeast = e.estimate === "lower_bound" ? "at least " : "";
  const lines = [
    `dry run (nothing started): ${count(e.rows, "row")}, ${count(e.cells, "cell")}, ${atLeast}${count(e.estimatedCredits, "estimated credit")}`,
  ];
  const name = (id: string) => table.groups.find((g) => g.id === id)?.name ?? id;
  for (const g of e.groups) {
    // Cells the enrichment result cache would serve, and those whose run condition does
    // not hold, cost nothing: say how many.
    const free = [
      ...(g.cached > 0 ? [`${g.cached} from the cache`] : []),
      ...(g.skippedByCondition > 0 ? [`${g.skippedByCondition} condition not met`] : []),
    ];
    const cached = free.length > 0 ? ` (${free.join(", ")})` : "";
    const atMost = g.upperBound ? "at most " : "";
    lines.push(
      `  ${name(g.groupId)}: ${count(g.cells, "cell")}, ${atMost}${count(g.credits, "credit")}${cached}`,
    );
  }
  for (const u of e.unknown)
    lines.push(`  ${name(u.groupId)}: credits not known ahead (${u.reason})`);
  if (e.rowBudgetCapped)
    lines.push(
      `  at most ${count(e.maxCreditsPerRow ?? 0, "credit")} per row (the per-row budget)`,
    );
  return `${lines.join("\n")}\n`;
}

export async function runCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(RUN_SPEC, argv);
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${RUN}\n`);
    return done;
  }
  const tableRef = args.value.positionals[0] ?? "";
  const found = await commandTable(ctx, tableRef);
  if (!found.ok) return found;
  const { conn, table } = found.value;
  const body = runRequest(table, args.value.values);
  if (!body.ok) return body;
  const answer = await call(
    conn,
    conn.client.POST("/api/tables/{id}/runs", {
      params: {
        path: { id: table.id },
        // One key per invocation: whatever repeats this request (a retry, a proxy) starts
        // the run once and gets it back.
        header: { "idempotency-key": randomUUID() },
      },
      body: body.value,
    }),
  );
  if (!answer.ok) return answer;
  const started = answer.value;
  if ("estimatedCredits" in started) {
    ctx.stdout.write(estimateText(started, table));
    return done;
  }
  const more = started.stamping ? " so far (stamping the rest)" : "";
  if (!args.value.values.follow) {
    ctx.stdout.write(
      `run ${started.dispatchId} started: ${count(started.stamped, "cell")}${more}\n`,
    );
    return done;
  }
  ctx.stdout.write(
    `run ${started.dispatchId} started: ${count(started.stamped, "cell")}${more}; following (Ctrl-C detaches)\n`,
  );
  const groups = (body.value.groupIds ?? []).map((g) => ` --group ${shellWord(g)}`).join("");
  return follow(conn, ctx, table, {
    rerun: `cellflow run ${shellWord(tableRef)}${groups}`,
    stop: `cellflow stop ${shellWord(tableRef)} --run ${started.dispatchId}`,
    runId: started.dispatchId,
  });
}

async function follow(
  conn: Connection,
  ctx: CliContext,
  table: Table,
  { runId, rerun, stop }: { runId: string; rerun: string; stop: string },
): Promise<CliResult> {
  ctx.claimInterrupt();
  const followed = await followRun({
    conn,
    tableId: table.id,
    runId,
    out: ctx.stdout,
    tty: ctx.stdout.isTTY === true,
    detach: ctx.interrupted,
  });
  if (!followed.ok) return followed;
  const { how, run, elapsedMs } = followed.value;
  if (how === "detached")
    return {
      ok: false,
      reason: {
        exit: EXIT.interrupted,
        message: `detached; run ${runId} goes on`,
        details: [`stop it with: ${stop}`],
      },
    };
  if (!run) return done;
  const end = runEnd(run, elapsedMs, rerun);
  if (end.exit !== EXIT.ok) return { ok: false, reason: { exit: end.exit, message: end.message } };
  ctx.stdout.write(`${end.message}\n${end.hint ? `${end.hint}\n` : ""}`);
  return done;
}
