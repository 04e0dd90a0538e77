/**
 * Records a sub-workflow run starting inside an attempt. Invariant: fenced like every
 * attempt write — only while the cell is `running` under this execution and attempt, so
 * a stale worker cannot add children to an attempt that lost the cell; a child re-run by
 * a retry of its block in the same attempt starts its record again.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { cellHeldBy } from "../cells/transition";

export interface ChildRunRef {
  /** The child's execution id. */
  id: string;
  executionId: string;
  attempt: number;
}

export interface ChildRunStart extends ChildRunRef {
  parentId: string;
  rowId: string;
  groupId: string;
  blockId: string;
  itemIndex: number | null;
  workflowId: string;
}

/** False when the attempt lost the cell (the caller aborts). */
export async function startChildRun(db: Db, child: ChildRunStart): Promise<boolean> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`insert into child_runs (id, attempt, execution_id, parent_id, row_id, group_id, block_id,
                                item_index, workflow_id, status)
        select ${child.id}, ${child.attempt}, ${child.executionId}, ${child.parentId}, ${child.rowId},
               ${child.groupId}, ${child.blockId}, ${child.itemIndex}, ${child.workflowId}, 'running'
         where ${cellHeldBy(child)}
        on conflict (id, attempt) do update
           set status = 'running', output = null, error = null, started_at = now(), ended_at = null
        returning 1 as one`,
  );
  return rows.length === 1;
}
