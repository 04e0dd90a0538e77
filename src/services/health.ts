import type { Db } from "@db/client";
import type { HealthView } from "@/contracts/health";
import { pingDatabase } from "@/store/health/ping";

export async function checkHealth(db: Db, backend: HealthView["backend"]): Promise<HealthView> {
  try {
    await pingDatabase(db);
    return { ok: true, db: "ok", backend };
  } catch {
    return { ok: false, db: "error", backend };
  }
}
