import type { Db } from "@db/client";
import { hookDeliveries } from "@db/schema";
import { and, eq } from "drizzle-orm";

/** Records the answer to a claimed delivery; replays get exactly this. */
export async function completeDelivery(
  db: Db,
  hookId: string,
  digest: string,
  statusCode: number,
  response: unknown,
): Promise<void> {
  await db
    .update(hookDeliveries)
    .set({ statusCode, response })
    .where(and(eq(hookDeliveries.hookId, hookId), eq(hookDeliveries.signatureDigest, digest)));
}
