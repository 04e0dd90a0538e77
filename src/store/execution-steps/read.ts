/**
 * Reads of what an execution recorded, for its next attempt. An execution reuses its own
 * records and those of the executions it resumes (`executions.resumes`, newest first):
 * for each step the newest record wins.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Checkpoint } from "@/contracts/workflow";
import { textArray } from "../sql";

export interface ExecutionRecords {
  /** The cell's own blocks this execution finished (or copied from the one it resumes). */
  checkpoints: Record<string, Checkpoint>;
  /** This execution, then the ones it resumes, newest first. */
  chain: string[];
  /** The runs (scopes) that have step records in the chain. */
  scopes: string[];
}

export async function readExecutionRecords(db: Db, executionId: string): Promise<ExecutionRecords> {
  const [row] = await queryRows<ExecutionRecords>(
    db,
    sql`with x as (
          select coalesce(e.checkpoints, '{}'::jsonb) as checkpoints,
                 array[${executionId}::text] || coalesce(e.resumes, '{}') as chain
            from (select 1) one left join executions e on e.id = ${executionId}
        )
        select x.checkpoints, x.chain,
               coalesce((select array_agg(distinct s.scope) from execution_steps s
                          where s.execution_id = any(x.chain)), '{}') as scopes
          from x`,
  );
  return row ?? { checkpoints: {}, chain: [executionId], scopes: [] };
}

export interface RecordedStep {
  key: string;
  /** The execution that recorded it (the first of the chain, or one it resumes). */
  executionId: string;
  digest: string;
  output: unknown;
  taken: string[];
  retryOnResume: boolean;
}

/** The newest record of each step of one run (`scope`) in the chain. */
export async function readSteps(
  db: Db,
  chain: readonly string[],
  scope: string,
): Promise<RecordedStep[]> {
  return queryRows<RecordedStep>(
    db,
    sql`select distinct on (s.key) s.key, s.execution_id as "executionId", s.digest, s.output,
               s.taken, s.retry_on_resume as "retryOnResume"
          from execution_steps s
         where s.execution_id = any(${textArray(chain)}) and s.scope = ${scope}
         order by s.key, array_position(${textArray(chain)}, s.execution_id)`,
  );
}
