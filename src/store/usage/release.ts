/**
 * An attempt gives back what it reserved for one charge key, now: the call found nothing,
 * failed, or its answer will not be recorded. Invariant: only a `reserved` entry of this
 * very attempt is released (a charged one never is); whatever an attempt still holds when
 * it ends is released by the trigger of migration `credit_ledger_release` (the same SQL function), so this
 * only makes the caps see the credits sooner.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import type { CellAttemptRef } from "../cells/transition";

export async function releaseCharge(
  db: Db,
  r: { cell: CellAttemptRef; charge: ChargeKey },
): Promise<void> {
  await db.execute(
    sql`select cellflow_release_reserved(${r.cell.executionId}, ${r.cell.attempt}::int,
                                         ${r.charge.chargeId}, ${r.charge.source})`,
  );
}
