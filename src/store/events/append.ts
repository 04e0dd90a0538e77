import type { Db } from "@db/client";
import { events } from "@db/schema";
import type { EventKind } from "@/domain/statuses";

/** Appends an event; call it inside the transaction of the change it describes. */
export async function appendEvent(
  tx: Db,
  tableId: string,
  kind: EventKind,
  data: unknown,
): Promise<number> {
  const [row] = await tx
    .insert(events)
    .values({ tableId, kind, data })
    .returning({ id: events.id });
  if (!row) throw new Error("event insert returned nothing");
  return row.id;
}
