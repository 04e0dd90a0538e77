import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { EventKind } from "@/domain/statuses";

export interface StoredEvent {
  /** The stream position (see sequence.ts), sent as the SSE id. */
  seq: number;
  kind: EventKind;
  data: unknown;
}

/** The table's sequenced events after position `after`, in order. */
export function eventsAfter(
  db: Db,
  tableId: string,
  after: number,
  limit: number,
): Promise<StoredEvent[]> {
  return queryRows<StoredEvent>(
    db,
    sql`select seq, kind, data from events
         where table_id = ${tableId} and seq > ${after} order by seq limit ${limit}`,
  );
}

/**
 * Where a stream without a cursor starts (the table's newest position), and the lowest
 * position of the table pruning has not deleted (one past its pruned mark, see
 * prune.ts): a cursor below `oldest - 1` asks for pruned events. Both are index lookups,
 * however many events are kept.
 */
export async function eventBounds(
  db: Db,
  tableId: string,
): Promise<{ newest: number; oldest: number }> {
  const [row] = await queryRows<{ newest: number; oldest: number }>(
    db,
    sql`select coalesce((select max(seq) from events where table_id = ${tableId}), 0)::bigint as newest,
               (coalesce((select through_seq from events_pruned where table_id = ${tableId}), 0) + 1)::bigint as oldest`,
  );
  return { newest: row?.newest ?? 0, oldest: row?.oldest ?? 1 };
}
