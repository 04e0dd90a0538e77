import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface DeletedTable {
  /** Execution ids of cells that were still running, to abort them at once. */
  running: string[];
  /** Their task backend run ids, where the backend recorded one (trigger.dev). */
  runIds: string[];
}

/**
 * Deletes a table of the workspace; rows, cells, executions, events, dispatches and hooks
 * go with it (foreign key cascades). An attempt still running finds no cell to write and
 * stops; it is returned so the caller can stop it sooner. Null: no such table here.
 */
export async function deleteTable(
  db: Db,
  table: {
    workspaceId: string;
    tableId: string;
    /**
     * With a remote backend the running cells' runs enter the cancel outbox in the same
     * statement as the delete: nothing is left to a step a process exit could skip.
     */
    outboxRunIds?: boolean;
  },
): Promise<DeletedTable | null> {
  const { workspaceId, tableId } = table;
  const outbox = table.outboxRunIds
    ? sql`, outbox as (
          insert into run_cancels (run_id, table_id)
          select distinct run_id, ${tableId} from doomed
           where run_id is not null and exists (select 1 from del)
          on conflict (run_id) do nothing)`
    : sql``;
  const [row] = await queryRows<DeletedTable>(
    db,
    sql`with doomed as (
          select execution_id, run_id from cells where table_id = ${tableId} and status = 'running'
        ),
        del as (delete from tables where id = ${tableId} and workspace_id = ${workspaceId} returning id)${outbox}
        select coalesce((select array_agg(execution_id) from doomed), '{}') as running,
               coalesce((select array_agg(run_id) from doomed where run_id is not null), '{}') as "runIds"
          from del`,
  );
  return row ?? null;
}
