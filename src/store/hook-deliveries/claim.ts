import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** A delivery: the hook it came to and its signature's digest. */
export interface DeliveryRef {
  hookId: string;
  digest: string;
}

export type DeliveryClaim =
  | { claimed: true }
  /** Seen before: its recorded answer, or null status while the first is still in progress. */
  | { claimed: false; statusCode: number | null; response: unknown };

/**
 * Claims a delivery for processing; exactly one caller wins for a (hook, digest). A
 * concurrent claim of the same delivery waits on the winner's uncommitted row (the
 * primary key), so inside a transaction it sees the outcome, not a half-done state.
 */
export async function claimDelivery(db: Db, delivery: DeliveryRef): Promise<DeliveryClaim> {
  const { hookId, digest } = delivery;
  const inserted = await queryRows<{ one: number }>(
    db,
    sql`insert into hook_deliveries (hook_id, signature_digest)
        values (${hookId}, ${digest})
        on conflict do nothing
        returning 1 as one`,
  );
  if (inserted.length > 0) return { claimed: true };
  const [seen] = await queryRows<{ statusCode: number | null; response: unknown }>(
    db,
    sql`select status_code as "statusCode", response
          from hook_deliveries
         where hook_id = ${hookId} and signature_digest = ${digest}`,
  );
  // Gone between the two statements (released, or pruned): it is still a replay of a
  // delivery that did not complete, answered as in progress rather than processed again.
  return { claimed: false, statusCode: seen?.statusCode ?? null, response: seen?.response ?? null };
}
