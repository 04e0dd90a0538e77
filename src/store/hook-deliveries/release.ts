import type { Db } from "@db/client";
import { hookDeliveries } from "@db/schema";
import { and, eq, isNull } from "drizzle-orm";
import type { DeliveryRef } from "./claim";

/**
 * Drops the claim of a delivery that was refused without writing anything, so the same
 * request is judged afresh if it comes again. A completed delivery is never released.
 */
export async function releaseDelivery(db: Db, delivery: DeliveryRef): Promise<void> {
  const { hookId, digest } = delivery;
  await db
    .delete(hookDeliveries)
    .where(
      and(
        eq(hookDeliveries.hookId, hookId),
        eq(hookDeliveries.signatureDigest, digest),
        isNull(hookDeliveries.statusCode),
      ),
    );
}
