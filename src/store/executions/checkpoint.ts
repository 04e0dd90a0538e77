import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Checkpoint } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { cellHeldBy } from "../cells/transition";
import { jsonb } from "../sql";
import { settleCtes } from "../usage/settle";

export interface ExecutionRef {
  executionId: string;
  tableId: string;
  rowId: string;
  groupId: string;
  /** The attempt writing (its writes are fenced on it: see cells/transition.ts). */
  attempt: number;
}

/**
 * Records a finished block of an attempt, fenced like every attempt write: only while
 * the cell is `running` under this execution id. Returns false when the attempt lost
 * the cell (the caller aborts). The paid answers the block's output holds (`charges`)
 * are charged in the same statement, only if the record was written; such a write holds
 * the cell's row for its fence (`cellHeldBy`), so a Stop cannot end the attempt (and
 * release its reservations) between the check and the settle.
 */
export async function writeCheckpoint(
  db: Db,
  ref: ExecutionRef,
  blockId: string,
  checkpoint: Checkpoint,
  charges: readonly ChargeKey[] = [],
): Promise<boolean> {
  const settle =
    charges.length === 0
      ? sql``
      : sql`, ${settleCtes(
          sql`select k."chargeId" as charge_id, k.source, k.milli, ${ref.executionId}::text as cell_execution_id,
                     ${ref.attempt}::int as attempt
                from cp cross join jsonb_to_recordset(${jsonb(charges)}) as k("chargeId" text, source text, milli bigint)`,
          "cp",
        )}`;
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with cp as (
          insert into executions (id, table_id, row_id, group_id, checkpoints)
          select ${ref.executionId}, ${ref.tableId}, ${ref.rowId}, ${ref.groupId},
                 jsonb_build_object(${blockId}::text, ${jsonb(checkpoint)})
           where ${cellHeldBy(ref, charges.length > 0)}
          on conflict (id) do update
             set checkpoints = executions.checkpoints || excluded.checkpoints, updated_at = now()
          returning id)${settle}
        select id from cp`,
  );
  return rows.length === 1;
}
