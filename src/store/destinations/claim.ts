/**
 * Claiming outbox entries to send. Invariants, all in the SQL: a delivery is sent only
 * while its destination is enabled; at most `cap` deliveries of a destination are in
 * flight (a lease ahead of now); a row's delivery waits until every earlier one of the
 * same row and destination is delivered or failed; a claim is a lease, so a sender killed
 * mid-delivery leaves the entry to be claimed again when the lease runs out, with the same
 * body and id. Claimers of one destination take turns on its row lock (`skip locked`: the
 * one that finds it taken claims nothing there this turn), and the in-flight count is
 * read by a statement that starts after that lock is held, so it sees every lease an
 * earlier claimer committed.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

export interface ClaimedDelivery {
  id: string;
  destinationId: string;
  rowId: string;
  url: string;
  secretCiphertext: string;
  /** The body exactly as stored, sent as is. */
  body: string;
  /** This attempt's number: the lease's token (settle only if it is still ours). */
  attempts: number;
  /** When the entry was made (ms since the epoch): retries stop a day after. */
  createdAtMs: number;
}

/** Enabled destinations with a delivery that is due and not leased. */
export async function destinationsWithDueDeliveries(db: Db, now: Date): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select d.id from destinations d
         where d.enabled
           and exists (select 1 from destination_deliveries x
                        where x.destination_id = d.id and x.status = 'pending'
                          and x.next_attempt_at <= ${now.toISOString()}::timestamptz
                          and (x.lease_until is null
                               or x.lease_until <= ${now.toISOString()}::timestamptz))`,
  );
  return rows.map((r) => r.id);
}

/**
 * The destination's deliveries in flight (leased ahead of `now`): read from the partial
 * lease index, so a claim costs the deliveries in flight, not the pending backlog.
 */
export const inFlight = (destinationId: string, now: Date): SQL =>
  sql`select count(*) from destination_deliveries
       where destination_id = ${destinationId} and status = 'pending'
         and lease_until > ${now.toISOString()}::timestamptz`;

export interface ClaimOptions {
  now: Date;
  /** In flight at once per destination. */
  cap: number;
  leaseMs: number;
}

/** Empty when another claimer holds the destination, it is disabled, or nothing is due. */
export async function claimDeliveries(
  db: Db,
  destinationId: string,
  o: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  const now = o.now.toISOString();
  const until = new Date(o.now.getTime() + o.leaseMs).toISOString();
  return db.transaction(async (tx) => {
    const [held] = await queryRows<{ id: string }>(
      tx,
      // `no key update`: a drain inserting this destination's deliveries (a key share on
      // it, the foreign key) neither waits for a claim nor makes one skip.
      sql`select id from destinations where id = ${destinationId} and enabled
           for no key update skip locked`,
    );
    if (!held) return [];
    return queryRows<ClaimedDelivery>(
      tx,
      sql`with room as (
            select greatest(${o.cap} - (${inFlight(destinationId, o.now)}), 0)::int as n
          ),
          pick as (
            select x.id from destination_deliveries x
             where x.destination_id = ${destinationId} and x.status = 'pending'
               and x.next_attempt_at <= ${now}::timestamptz
               and (x.lease_until is null or x.lease_until <= ${now}::timestamptz)
               and not exists (select 1 from destination_deliveries e
                                where e.destination_id = x.destination_id
                                  and e.row_id = x.row_id and e.seq < x.seq
                                  and e.status = 'pending')
             order by x.next_attempt_at, x.created_at, x.seq
             limit (select n from room)
             for update skip locked
          )
          update destination_deliveries u
             set lease_until = ${until}::timestamptz, attempts = u.attempts + 1
            from pick, destinations d
           where u.id = pick.id and d.id = u.destination_id
          returning u.id, u.destination_id as "destinationId", u.row_id as "rowId",
                    d.url, d.secret_ciphertext as "secretCiphertext", u.body::text as body,
                    u.attempts,
                    (extract(epoch from u.created_at) * 1000)::float8 as "createdAtMs"`,
    );
  });
}
