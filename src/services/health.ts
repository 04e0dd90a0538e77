import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { HealthView } from "../contracts/health";

export async function checkHealth(db: Db, backend: HealthView["backend"]): Promise<HealthView> {
  try {
    await db.execute(sql`select 1`);
    return { ok: true, db: "ok", backend };
  } catch {
    return { ok: false, db: "error", backend };
  }
}
