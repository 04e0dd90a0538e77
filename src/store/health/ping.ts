import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

/** One round trip; throws when the database does not answer. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
