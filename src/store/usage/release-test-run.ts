/**
 * A test run gives back what it reserved: one charge key now (its call found nothing or
 * failed), everything it still holds (it ended), or, in the maintenance sweep, what test
 * runs that never ended left behind (their process died between a reservation and the
 * run's end). Invariant: only `reserved` entries of test runs are released (a charged one
 * never is), through the one release function a cell's attempt uses
 * (cellflow_release_reserved, migration `credit_ledger_release`), which moves the
 * workspace's counter by exactly what its DELETE removed.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import { TEST_RUN_ATTEMPT } from "./reserve-test-call";

export async function releaseTestCall(
  db: Db,
  r: { testRunId: string; charge: ChargeKey },
): Promise<void> {
  await db.execute(
    sql`select cellflow_release_reserved(${r.testRunId}, ${TEST_RUN_ATTEMPT}::int,
                                         ${r.charge.chargeId}, ${r.charge.source})`,
  );
}

/** A test run's entries are this old at most while it runs (its time cap is far shorter). */
const STALE_AFTER = "1 hour";

/** Releases what test runs older than an hour still hold; returns how many runs. */
export async function releaseStaleTestRuns(db: Db): Promise<number> {
  const [row] = await queryRows<{ runs: number }>(
    db,
    sql`select count(cellflow_release_reserved(s.run, ${TEST_RUN_ATTEMPT}::int))::int as runs
          from (select distinct cell_execution_id as run from usage
                 where state = 'reserved' and attempt = ${TEST_RUN_ATTEMPT}::int and table_id is null
                   and created_at < now() - ${STALE_AFTER}::interval) s`,
  );
  return row?.runs ?? 0;
}
