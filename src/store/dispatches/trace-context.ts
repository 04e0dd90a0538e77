/** The `traceparent` a run kept of its span (null: none, or the run is gone). */
import type { Db } from "@db/client";
import { dispatches } from "@db/schema";
import { eq } from "drizzle-orm";

export async function readTraceContext(db: Db, dispatchId: string): Promise<string | null> {
  const [row] = await db
    .select({ traceContext: dispatches.traceContext })
    .from(dispatches)
    .where(eq(dispatches.id, dispatchId));
  return row?.traceContext ?? null;
}
