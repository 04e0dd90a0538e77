/**
 * Records one finished step of an execution (a block inside a child run, or a foreach
 * item that ended `ok`) as a row of its own: one INSERT, never a rewrite of what was
 * recorded before, so N items write O(N) bytes. Invariant: fenced like every attempt write
 * — only while the cell is `running` under this execution and attempt; zero rows means the
 * attempt lost the cell (the caller aborts). An item's child run ends in the same
 * statement, and only when its record was written; its output is kept once, in the
 * record (the cell's history reads it from there).
 *
 * One statement on purpose: what must commit with a step's record joins it as another CTE
 * guarded by the step's own row — the paid answers its output holds (`charges`) are
 * settled there (their reservations become charges only if the record was written; the
 * fence then holds the cell's row, see `cellHeldBy`).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import type { CellAttemptRef } from "../cells/transition";
import { cellHeldBy } from "../cells/transition";
import { jsonb, textArray } from "../sql";
import { settleCtes } from "../usage/settle";

export interface StepRow {
  /** The run it belongs to: "" for the cell's workflow, else the child's id after the cell's. */
  scope: string;
  /** A block id, or `<blockId>#<index>` for a foreach item. */
  key: string;
  digest: string;
  output: unknown;
  taken: readonly string[];
  retryOnResume: boolean;
}

/** False when the attempt no longer holds the cell. */
export async function recordStep(
  db: Db,
  ref: CellAttemptRef,
  step: StepRow,
  /** A foreach item's child run, ended `completed` with its record. */
  childRunId?: string,
  charges: readonly ChargeKey[] = [],
): Promise<boolean> {
  const [row] = await queryRows<{ recorded: number }>(
    db,
    sql`with step as (
          insert into execution_steps (execution_id, scope, key, row_id, group_id, attempt, digest,
                                       output, taken, retry_on_resume)
          select ${ref.executionId}, ${step.scope}, ${step.key}, ${ref.rowId}, ${ref.groupId},
                 ${ref.attempt}, ${step.digest}, ${jsonb(step.output ?? null)},
                 ${textArray(step.taken)}, ${step.retryOnResume}
           where ${cellHeldBy(ref, charges.length > 0)}
          on conflict (execution_id, scope, key) do update
             set attempt = excluded.attempt, digest = excluded.digest, output = excluded.output,
                 taken = excluded.taken, retry_on_resume = excluded.retry_on_resume,
                 created_at = now()
          returning 1 as one
        )${
          childRunId !== undefined
            ? sql`,
        child as (
          update child_runs set status = 'completed', ended_at = now(), output = null, error = null
           where id = ${childRunId} and attempt = ${ref.attempt} and execution_id = ${ref.executionId}
             and status = 'running' and exists (select 1 from step)
          returning 1 as one
        )`
            : sql``
        }${
          charges.length > 0
            ? sql`, ${settleCtes(
                sql`select k."chargeId" as charge_id, k.source, k.milli, ${ref.executionId}::text as cell_execution_id,
                           ${ref.attempt}::int as attempt
                      from step cross join jsonb_to_recordset(${jsonb(charges)}) as k("chargeId" text, source text, milli bigint)`,
                "step",
              )}`
            : sql``
        }
        select (select count(*) from step)::int as recorded`,
  );
  return row?.recorded === 1;
}
