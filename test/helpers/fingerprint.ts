import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";

/** A summary of everything a request could have written; equal before and after = no write. */
export async function dbFingerprint(): Promise<string> {
  const [row] = await queryRows<Record<string, unknown>>(
    getDatabase().db,
    sql`select
      (select count(*) from workspaces) as workspaces,
      (select count(*) from api_keys where revoked_at is null) as keys,
      (select count(*) from workflows) as workflows,
      (select max(updated_at) from workflows) as workflows_at,
      (select count(*) from workflow_versions) as versions,
      (select count(*) from tables) as tables,
      (select coalesce(sum(schema_version), 0) from tables) as schema_versions,
      (select count(*) from rows) as rows,
      (select max(updated_at) from rows) as rows_at,
      (select count(*) from cells) as cells,
      -- progress events are the counters' fold's, written on its own clock (not by a request)
      (select count(*) from events where kind <> 'progress') as events,
      (select count(*) from hooks where revoked_at is null) as hooks,
      (select count(*) from hook_deliveries) as hook_deliveries,
      (select count(*) from secrets) as secrets,
      (select max(updated_at) from secrets) as secrets_at,
      (select count(*) from saved_views) as views,
      (select max(updated_at) from saved_views) as views_at,
      (select count(*) from schedules) as schedules,
      (select max(updated_at) from schedules) as schedules_at,

      (select string_agg(id || ':' || enabled, ',' order by id) from destinations) as destinations`,
  );
  return JSON.stringify(row);
}
