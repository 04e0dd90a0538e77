/** Deletes a schedule, scoped in its WHERE to the workspace and table (false: not found). */
import type { Db } from "@db/client";
import { schedules } from "@db/schema";
import { and, eq } from "drizzle-orm";

export async function deleteSchedule(
  db: Db,
  target: { workspaceId: string; tableId: string; scheduleId: string },
): Promise<boolean> {
  const rows = await db
    .delete(schedules)
    .where(
      and(
        eq(schedules.id, target.scheduleId),
        eq(schedules.tableId, target.tableId),
        eq(schedules.workspaceId, target.workspaceId),
      ),
    )
    .returning({ id: schedules.id });
  return rows.length === 1;
}
