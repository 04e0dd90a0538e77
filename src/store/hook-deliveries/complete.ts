import type { Db } from "@db/client";
import { hookDeliveries } from "@db/schema";
import { and, eq } from "drizzle-orm";
import type { DeliveryRef } from "./claim";

/** Records the answer to a claimed delivery; replays get exactly this. */
export async function completeDelivery(
  db: Db,
  delivery: DeliveryRef & { statusCode: number; response: unknown },
): Promise<void> {
  const { hookId, digest, statusCode, response } = delivery;
  await db
    .update(hookDeliveries)
    .set({ statusCode, response })
    .where(and(eq(hookDeliveries.hookId, hookId), eq(hookDeliveries.signatureDigest, digest)));
}
