import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";

export interface Health {
  ok: boolean;
  db: "ok" | "error";
  backend: "local" | "trigger";
}

export async function checkHealth(db: Db, backend: Health["backend"]): Promise<Health> {
  try {
    await db.execute(sql`select 1`);
    return { ok: true, db: "ok", backend };
  } catch {
    return { ok: false, db: "error", backend };
  }
}
