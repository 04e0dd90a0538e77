/**
 * Creates a schedule. Invariant: a table never has more than MAX_SCHEDULES_PER_TABLE
 * schedules: the insert runs under the table's cap behind a lock on the table's row
 * (store/tables/capped-insert.ts), so creates at the cap minus one take turns.
 */
import type { Db } from "@db/client";
import { schedules } from "@db/schema";
import { eq, sql } from "drizzle-orm";
import { MAX_SCHEDULES_PER_TABLE } from "@/contracts/schedules";
import { insertUnderTableCap } from "@/store/tables/capped-insert";
import { type ScheduleRecord, scheduleColumns } from "./read";

export interface NewSchedule {
  id: string;
  workspaceId: string;
  tableId: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  run: Record<string, unknown>;
  nextRunAt: Date;
}

export type ScheduleCreated =
  | { ok: true; schedule: ScheduleRecord }
  | { ok: false; reason: "table_not_found" | "limit_reached" };

export async function insertSchedule(db: Db, s: NewSchedule): Promise<ScheduleCreated> {
  const created = await insertUnderTableCap(
    db,
    {
      workspaceId: s.workspaceId,
      tableId: s.tableId,
      of: "schedules",
      cap: MAX_SCHEDULES_PER_TABLE,
    },
    sql`insert into schedules (id, workspace_id, table_id, cron, timezone, enabled, run, next_run_at)
        select ${s.id}, ${s.workspaceId}, ${s.tableId}, ${s.cron}, ${s.timezone}, ${s.enabled},
               ${JSON.stringify(s.run)}::jsonb, ${s.nextRunAt.toISOString()}::timestamptz`,
    async (tx, id) => {
      const [saved] = await tx.select(scheduleColumns).from(schedules).where(eq(schedules.id, id));
      return saved;
    },
  );
  return created.ok ? { ok: true, schedule: created.saved } : created;
}
