import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { DeliveryStatus, DeliveryView } from "@/contracts/destinations";

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * A destination's deliveries, newest first, `limit` of them after the cursor (the last id
 * of the previous page); one more is read to tell whether a next page exists. `withError`
 * keeps those with a last error (failed, or pending and being retried).
 */
export async function listDeliveries(
  db: Db,
  destinationId: string,
  q: { status?: DeliveryStatus; withError?: boolean; cursor?: string; limit: number },
): Promise<DeliveryView[]> {
  const status = q.status ? sql`and x.status = ${q.status}` : sql``;
  const erred = q.withError ? sql`and x.last_error is not null` : sql``;
  const after = q.cursor
    ? sql`and (x.created_at, x.id) < (select c.created_at, c.id from destination_deliveries c
                                       where c.id = ${q.cursor}
                                         and c.destination_id = ${destinationId})`
    : sql``;
  return queryRows<DeliveryView>(
    db,
    sql`select x.id, x.row_id as "rowId", x.status, x.attempts, x.last_error as "lastError",
               ${iso("x.delivered_at")} as "deliveredAt",
               case when x.status = 'pending' then ${iso("x.next_attempt_at")} end
                 as "nextAttemptAt",
               ${iso("x.created_at")} as "createdAt"
          from destination_deliveries x
         where x.destination_id = ${destinationId} ${status} ${erred} ${after}
         order by x.created_at desc, x.id desc
         limit ${q.limit + 1}`,
  );
}
