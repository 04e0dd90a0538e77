/**
 * A sent delivery's outcome. Guard: the entry is still pending and still on the attempt
 * that was sent (`attempts`), so a sender whose lease ran out and was overtaken by another
 * cannot overwrite the newer attempt's outcome.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export type DeliveryOutcome =
  | { kind: "delivered" }
  | { kind: "retry"; error: string; at: Date }
  | { kind: "failed"; error: string };

/** False: the lease was lost (another attempt owns the entry now), nothing was written. */
export async function settleDelivery(
  db: Db,
  d: { id: string; attempts: number },
  outcome: DeliveryOutcome,
  now: Date,
): Promise<boolean> {
  const at = now.toISOString();
  const set =
    outcome.kind === "delivered"
      ? sql`status = 'delivered', delivered_at = ${at}::timestamptz, lease_until = null,
            last_error = null`
      : outcome.kind === "retry"
        ? sql`next_attempt_at = ${outcome.at.toISOString()}::timestamptz, lease_until = null,
              last_error = ${outcome.error}`
        : sql`status = 'failed', lease_until = null, last_error = ${outcome.error}`;
  const rows = await queryRows<{ id: string }>(
    db,
    sql`update destination_deliveries set ${set}
         where id = ${d.id} and status = 'pending' and attempts = ${d.attempts}
        returning id`,
  );
  return rows.length > 0;
}
