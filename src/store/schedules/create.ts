/**
 * Creates a schedule. Invariant: a table never has more than MAX_SCHEDULES_PER_TABLE
 * schedules. The cap is the insert's own WHERE, and the table's row is locked (FOR NO KEY
 * UPDATE, which row inserts' foreign-key locks do not wait on) in a statement before it,
 * so two creates at the cap minus one take turns: the second insert's count runs on a
 * snapshot taken after the first committed.
 */
import { type Db, queryRows } from "@db/client";
import { schedules } from "@db/schema";
import { eq, sql } from "drizzle-orm";
import { MAX_SCHEDULES_PER_TABLE } from "@/contracts/schedules";
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
  return db.transaction(async (tx) => {
    const locked = await queryRows<{ id: string }>(
      tx,
      sql`select id from tables
          where id = ${s.tableId} and workspace_id = ${s.workspaceId}
          for no key update`,
    );
    if (locked.length === 0) return { ok: false, reason: "table_not_found" };
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into schedules (id, workspace_id, table_id, cron, timezone, enabled, run, next_run_at)
          select ${s.id}, ${s.workspaceId}, ${s.tableId}, ${s.cron}, ${s.timezone}, ${s.enabled},
                 ${JSON.stringify(s.run)}::jsonb, ${s.nextRunAt.toISOString()}::timestamptz
          where (select count(*) from schedules where table_id = ${s.tableId}) < ${MAX_SCHEDULES_PER_TABLE}
          returning id`,
    );
    if (!row) return { ok: false, reason: "limit_reached" };
    // Read back through the schema's columns: raw statements return timestamps as text.
    const [saved] = await tx
      .select(scheduleColumns)
      .from(schedules)
      .where(eq(schedules.id, row.id));
    if (!saved) throw new Error("schedule insert returned nothing");
    return { ok: true, schedule: saved };
  });
}
