import { workspaceRoute } from "@/http/handler";
import { failureResponse } from "@/http/respond";
import { parseCursor, tableEvents } from "@/services/events";

export const dynamic = "force-dynamic";

export const GET = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const cursor = parseCursor(
    req.headers.get("last-event-id"),
    new URL(req.url).searchParams.get("after"),
  );
  if (!cursor.ok) return failureResponse(cursor.reason);
  const stream = await tableEvents(ctx, id, cursor.value, req.signal);
  if (!stream.ok) return failureResponse(stream.reason);
  return new Response(stream.value, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
});
