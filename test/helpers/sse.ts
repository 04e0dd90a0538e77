import path from "node:path";
import { pathToFileURL } from "node:url";
import { waitFor } from "./processes";

export interface SseEvent {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

type Handler = (
  req: Request,
  ctx: { params: Promise<Record<string, string>> },
) => Promise<Response>;

/** Opens the real events route in-process and parses what it streams. */
export async function openEvents(
  key: string,
  tableId: string,
  opts: { lastEventId?: number; after?: number } = {},
) {
  const file = path.resolve(import.meta.dirname, "../../src/app/api/tables/[id]/events/route.ts");
  const mod = (await import(pathToFileURL(file).href)) as { GET: Handler };
  const abort = new AbortController();
  const headers = new Headers({ authorization: `Bearer ${key}` });
  if (opts.lastEventId !== undefined) headers.set("last-event-id", String(opts.lastEventId));
  const qs = opts.after !== undefined ? `?after=${opts.after}` : "";
  const res = await mod.GET(
    new Request(`http://cellflow.test/api/tables/${tableId}/events${qs}`, {
      headers,
      signal: abort.signal,
    }),
    {
      params: Promise.resolve({ id: tableId }),
    },
  );
  const events: SseEvent[] = [];
  const refusal = res.status === 200 ? null : await res.text();
  let buffer = "";
  let done = false;
  const reading = (async () => {
    if (!res.body || refusal !== null) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields = Object.fromEntries(
            block
              .split("\n")
              .filter((l) => !l.startsWith(":") && l.includes(":"))
              .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
          );
          if (fields.event && fields.id) {
            events.push({
              id: Number(fields.id),
              event: fields.event,
              data: JSON.parse(fields.data ?? "null"),
            });
          }
          cut = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // Aborted by close().
    } finally {
      done = true;
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    events,
    async waitFor(check: (events: SseEvent[]) => boolean, ms = 30_000) {
      const ok = await waitFor(() => check(events), ms, 20);
      if (!ok) throw new Error(`stream never matched; got ${events.length} events`);
    },
    async close() {
      abort.abort();
      await res.body?.cancel().catch(() => {});
      await reading;
      return done;
    },
    body: refusal,
  };
}
