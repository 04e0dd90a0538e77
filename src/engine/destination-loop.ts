/**
 * The destinations' sender of a long-lived process (each worker runs one): every
 * `everyMs` it drains the cell-end marks into the outbox and claims what is due; the
 * sends run in the background, so a slow receiver holds only its own leases, never the
 * next tick. Guarantees: one drain-and-claim at a time per loop; `stop()` aborts the
 * sends in flight (each is settled as a retry due at once, or left to its lease) and
 * returns once none is in flight.
 */
import { claimDue, drainAllMarks, type SenderSettings, sendDelivery } from "./destination-send";

/** How often a worker drains and claims: a finished row leaves within about this. */
export const DESTINATION_EVERY_MS = 500;

export interface DestinationLoop {
  stop(): Promise<void>;
  /** One drain-and-claim now, its sends awaited (tests). */
  tick(): Promise<void>;
}

export function startDestinationLoop(
  s: SenderSettings,
  everyMs = DESTINATION_EVERY_MS,
): DestinationLoop {
  const stopping = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  let busy: Promise<void> | null = null;
  const turn = (): Promise<void> => {
    busy ??= (async () => {
      await drainAllMarks(s);
      const sends = (await claimDue(s)).map((d) => {
        const p = sendDelivery(s, d, stopping.signal).catch((err: unknown) =>
          s.log.warn({ err, deliveryId: d.id }, "delivery failed to settle; its lease expires"),
        );
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        return p;
      });
      return sends;
    })()
      .then(() => undefined)
      .catch((err: unknown) => s.log.warn({ err }, "destination pass failed; the next one retries"))
      .finally(() => {
        busy = null;
      });
    return busy;
  };
  const timer = setInterval(() => {
    if (!stopping.signal.aborted) void turn();
  }, everyMs);
  timer.unref();
  return {
    async tick() {
      await turn();
      await Promise.all([...inFlight]);
    },
    async stop() {
      clearInterval(timer);
      stopping.abort(new Error("sender stopping"));
      await busy;
      await Promise.all([...inFlight]);
    },
  };
}
