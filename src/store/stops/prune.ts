/**
 * Deletes Stop records that can hold nothing any more. A Stop holds a row's auto-run until
 * a run request made after it stamps the row (store/cells/stamp.ts, notHeld), so what it
 * could still hold comes from work older than it: a run created before it still active
 * (stamping its later pages, or handing out its window, over days at a slow plan), or a
 * cell whose newest request is older than it (or unknown) that is queued, running or
 * paused (an approval given the next day goes on to the groups after it), or that ended
 * less than `hours` ago (its carrier may be between that cell and the next auto-run
 * stamp). A record is also kept at least `hours` after the Stop, whatever the table holds.
 * A Stop's record with a `where` is also kept while a cancel scope names its row list.
 * Invariant: a record is deleted only when none of those is left, checked in the DELETE
 * itself, so a record in use is never pruned by an age alone.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { IN_FLIGHT } from "../sql";

export async function pruneStops(db: Db, hours = 24): Promise<number> {
  const since = sql`now() - make_interval(hours => ${hours})`;
  const older = sql`(c.request_seq is null or c.request_seq < s.seq)`;
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with del as (
          delete from stops s
           where s.created_at < ${since}
             -- A cancel scope names the Stop's row list while it covers anything.
             and not exists (select 1 from cancel_scopes cs where cs.stop_seq = s.seq)
             and not exists (select 1 from dispatches d
                              where d.table_id = s.table_id and d.status = 'active' and d.seq < s.seq)
             and not exists (select 1 from cells c
                              where c.table_id = s.table_id and c.status in ${IN_FLIGHT}
                                and ${older})
             and not exists (select 1 from cells c
                              where c.table_id = s.table_id and c.updated_at > ${since} and ${older})
          returning 1)
        select count(*)::int as n from del`,
  );
  return row?.n ?? 0;
}
