import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { getEventFeeds } from "@/events/instance";
import { openEventStream } from "@/events/stream";
import { tableForEngine } from "@/store/engine-reads";
import type { ServiceContext } from "./context";

/** The cursor from `Last-Event-ID` (preferred) or `?after=`; null = from now. */
export function parseCursor(
  lastEventId: string | null,
  after: string | null,
): Result<number | null, Failure> {
  const raw = lastEventId ?? after;
  if (raw === null || raw === "") return { ok: true, value: null };
  if (!/^\d{1,15}$/.test(raw)) {
    return {
      ok: false,
      reason: invalid([
        { path: lastEventId !== null ? "Last-Event-ID" : "after", message: "must be an event id" },
      ]),
    };
  }
  return { ok: true, value: Number(raw) };
}

export async function tableEvents(
  ctx: ServiceContext,
  tableId: string,
  after: number | null,
  signal: AbortSignal,
): Promise<Result<ReadableStream<Uint8Array>, Failure>> {
  const table = await tableForEngine(ctx.db, tableId);
  if (!table || table.workspaceId !== ctx.workspaceId)
    return { ok: false, reason: notFound("table") };
  const stream = await openEventStream({
    db: ctx.db,
    feeds: getEventFeeds(),
    log: ctx.log,
    tableId,
    after,
    signal,
  });
  return { ok: true, value: stream };
}
