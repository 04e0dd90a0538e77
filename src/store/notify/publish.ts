/**
 * A NOTIFY on a channel: delivered to its listeners when the sending transaction
 * commits (at once outside one). Payloads are capped at 8000 bytes by Postgres.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

export async function notify(db: Db, channel: string, payload: string): Promise<void> {
  await db.execute(sql`select pg_notify(${channel}, ${payload})`);
}
