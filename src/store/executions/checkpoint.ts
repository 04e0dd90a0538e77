import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Checkpoint } from "@/contracts/workflow";
import { cellHeldBy } from "../cells/transition";
import { jsonb } from "../sql";

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
 * the cell (the caller aborts).
 */
export async function writeCheckpoint(
  db: Db,
  ref: ExecutionRef,
  blockId: string,
  checkpoint: Checkpoint,
): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`insert into executions (id, table_id, row_id, group_id, checkpoints)
        select ${ref.executionId}, ${ref.tableId}, ${ref.rowId}, ${ref.groupId},
               jsonb_build_object(${blockId}::text, ${jsonb(checkpoint)})
         where ${cellHeldBy(ref)}
        on conflict (id) do update
           set checkpoints = executions.checkpoints || excluded.checkpoints, updated_at = now()
        returning id`,
  );
  return rows.length === 1;
}
