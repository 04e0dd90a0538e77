import type { Db } from "@db/client";
import { hookDeliveries } from "@db/schema";
import { and, eq, isNull } from "drizzle-orm";

/**
 * Drops the claim of a delivery that was refused without writing anything, so the same
 * request is judged afresh if it comes again. A completed delivery is never released.
 */
export async function releaseDelivery(db: Db, hookId: string, digest: string): Promise<void> {
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
