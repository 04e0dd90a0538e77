/**
 * The destinations' sender of a long-lived process (each worker runs one): every
 * `everyMs` it drains the cell-end marks into the outbox and claims what is due; the
 * sends run in the background, so a slow receiver holds only its own leases, never the
 * next tick. Guarantees: one drain-and-claim at a time per loop; a turn claims after a
 * bounded drain, and a failed drain still claims; `stop()` aborts the drain between two
 * passes and the sends in flight (each is settled as a retry due at once, or left to its
 * lease) and returns once none is in flight.
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
  let again = false;
  const once = async (): Promise<void> => {
    // A failed drain does not keep what is already in the outbox from being sent.
    const drained = await drainAllMarks(s, stopping.signal).catch((err: unknown) => {
      s.log.warn({ err }, "destination drain failed; the next pass drains again");
      return null;
    });
    if (stopping.signal.aborted) return;
    // Marks left over: drain again right after this claim, not a tick later.
    if (drained?.more) again = true;
    await claimDue(s, (d) => {
      const p = sendDelivery(s, d, stopping.signal)
        .catch((err: unknown) =>
          s.log.warn({ err, deliveryId: d.id }, "delivery failed to settle; its lease expires"),
        )
        // A settled delivery frees a slot and may unblock the row's next one: claim again
        // now rather than at the next tick, so a destination keeps its 10 in flight.
        .finally(() => {
          inFlight.delete(p);
          if (!stopping.signal.aborted) void turn();
        });
      inFlight.add(p);
    });
  };
  const turn = (): Promise<void> => {
    if (busy !== null) {
      again = true;
      return busy;
    }
    busy = (async () => {
      do {
        again = false;
        await once().catch((err: unknown) =>
          s.log.warn({ err }, "destination pass failed; the next one retries"),
        );
      } while (again && !stopping.signal.aborted);
    })().finally(() => {
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
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async stop() {
      clearInterval(timer);
      stopping.abort(new Error("sender stopping"));
      await busy;
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
