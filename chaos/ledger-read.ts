/**
 * What the money judge (`money.ts`) reads once a run has settled: the workspace's whole
 * ledger (`usage`, every state) and counters, and each paid cell with its input, its
 * end and the answer its execution recorded (a group's terminal details, a block's
 * checkpoint), plus how often the audit saw it claimed under that execution.
 */
import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { usedThisMonthMilli } from "@/store/usage/amounts";
import type { Transition } from "./audit";
import type { LedgerEntry, MoneyCell, MoneyInput, PaidGroup } from "./money-input";

/** A paid group as the workload built it: where its cells' input is in the row. */
export interface PaidColumn extends PaidGroup {
  inputColumn: string;
}

/** A cell as read, before its record is judged: the judge's fields but what it derives. */
interface CellRow extends Omit<MoneyCell, "recorded" | "claims"> {
  details: { cached?: boolean; costCredits?: number } | null;
  /** A block's checkpoint: `{ output, taken }`. */
  checkpoint: { output?: Record<string, unknown> | null } | null;
}

function recordedOf(c: CellRow, paid: PaidGroup): MoneyCell["recorded"] {
  if (paid.blockId === undefined) {
    if (c.status !== "completed") return null;
    return {
      found: c.outcome === "ok",
      cached: c.details?.cached === true,
      costCredits: c.details?.costCredits ?? null,
    };
  }
  if (!c.checkpoint) return null;
  const output = c.checkpoint.output ?? {};
  return {
    found: Object.values(output).some((v) => v !== null && v !== undefined),
    cached: null,
    costCredits: null,
  };
}

export async function readMoney(
  db: Db,
  r: {
    tableId: string;
    workspaceId: string;
    paid: readonly PaidColumn[];
    transitions: readonly Transition[];
  },
): Promise<Omit<MoneyInput, "answers" | "expected">> {
  const claims = new Map<string, number>();
  for (const t of r.transitions) {
    if (t.oldStatus !== "queued" || t.newStatus !== "running") continue;
    const k = `${t.rowId}/${t.groupId}/${t.newExec}`;
    claims.set(k, (claims.get(k) ?? 0) + 1);
  }
  const cells: MoneyCell[] = [];
  for (const paid of r.paid) {
    const rows = await queryRows<CellRow>(
      db,
      sql`select c.row_id as "rowId", c.group_id as "groupId", c.execution_id as "executionId",
                 c.status::text as status, c.outcome::text as outcome, c.attempt, c.error,
                 r.data->>${paid.inputColumn} as input, c.details,
                 e.checkpoints->${paid.blockId ?? ""} as checkpoint
            from cells c join rows r on r.id = c.row_id
            left join executions e on e.id = c.execution_id
           where c.table_id = ${r.tableId} and c.group_id = ${paid.groupId}`,
    );
    for (const c of rows) {
      const { details: _details, checkpoint: _checkpoint, ...cell } = c;
      cells.push({
        ...cell,
        recorded: recordedOf(c, paid),
        claims: claims.get(`${c.rowId}/${c.groupId}/${c.executionId}`) ?? 0,
      });
    }
  }
  const ledger = await queryRows<LedgerEntry>(
    db,
    sql`select execution_id as "executionId", source, milli::float8 as milli, state::text as state,
               row_id as "rowId", group_id as "groupId", cell_execution_id as "cellExecutionId", attempt,
               (extract(epoch from charged_at) * 1000)::float8 as "chargedAt"
          from usage where workspace_id = ${r.workspaceId}`,
  );
  const [counters] = await queryRows<{ usedMilli: number; reservedMilli: number }>(
    db,
    sql`select (${usedThisMonthMilli})::float8 as "usedMilli", w.reserved_milli::float8 as "reservedMilli"
          from workspaces w where w.id = ${r.workspaceId}`,
  );
  return {
    paid: r.paid,
    cells,
    ledger,
    counters: counters ?? { usedMilli: Number.NaN, reservedMilli: Number.NaN },
  };
}
