/**
 * Scenario 5, Stops mid-call: the chain workload with two worker processes, and at
 * `stops` random moments a Stop of the paid groups (`co`, `cw`) of the rows whose paid
 * cells are running at that instant — so most land while the billing provider has the
 * call, some between the block's checkpoint and the cell's end, some before the call.
 * The stopped cells end `cancelled` and the run goes on. Money must hold through it: a
 * Stop before the answer was recorded charges nothing and leaves no reservation; an
 * answer the block's checkpoint recorded before the Stop is charged, once.
 */
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { stopRuns } from "@/engine/stop";
import { type ChainOptions, type ChainResult, runChain } from "../chain-run";
import { PAID } from "../workload";

export interface StopOptions extends Omit<ChainOptions, "faults"> {
  stops: number;
  random: () => number;
  /** Rows per Stop, at most (those with a paid cell running then). */
  rowsPerStop?: number;
}

export function stopMidCall(opts: StopOptions): Promise<ChainResult> {
  const paid = PAID.map((p) => p.groupId);
  return runChain({
    ...opts,
    faults: async (run) => {
      const points = Array.from({ length: opts.stops }, () => 0.1 + opts.random() * 0.7).sort(
        (a, b) => a - b,
      );
      for (const p of points) {
        const reached = await run.monitor.waitForTerminal(
          Math.floor(p * run.cells),
          opts.timeoutMs,
        );
        if (!reached || run.monitor.last()?.status !== "active") return;
        const rows = await queryRows<{ rowId: string }>(
          run.db,
          sql`select row_id as "rowId" from cells
               where table_id = ${run.tableId} and status = 'running'
                 and group_id in (${sql.join(
                   paid.map((g) => sql`${g}`),
                   sql`, `,
                 )})
               limit ${opts.rowsPerStop ?? 10}`,
        );
        if (rows.length === 0) continue;
        const f = run.fault("Stop of running paid cells", {
          atFraction: +p.toFixed(3),
          rows: rows.length,
        });
        const { cancelled } = await stopRuns(
          { db: run.db, backend: run.backend },
          {
            tableId: run.tableId,
            rowIds: rows.map((r) => r.rowId),
            groupIds: paid,
          },
        );
        f.wallEnd = Date.now();
        f.detail.cancelled = cancelled;
      }
    },
  });
}
