/**
 * How a Stop reaches a running attempt: (1) the DB tombstone every write checks, which
 * alone guarantees correctness; (2) this process's registry of AbortControllers keyed by
 * execution id, for promptness; (3) a NOTIFY on `cellflow_cancel` that every worker
 * process LISTENs to (through its LISTEN hub, events/hub.ts) and feeds into its own
 * registry; (4) where no NOTIFY reaches (a
 * trigger.dev run is a process of its own, and its run is cancelled only when nothing
 * else rides on it), the attempt reads its tombstone every `STOP_CHECK_MS`
 * (`watchTombstone`): a block that writes nothing (a long http call, a wait) still ends
 * within that interval and one read of the Stop's commit.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import { sleep } from "@/domain/sleep";
import type { LostReason } from "@/domain/statuses";
import { CancelledError } from "@/errors";
import type { EventHub } from "@/events/hub";
import { attemptLost } from "@/store/engine-reads";
import { notify } from "@/store/notify/publish";

export const CANCEL_CHANNEL = "cellflow_cancel";

// On globalThis, the one holder the process keeps: Next.js may load a second copy of this
// module for the API routes, and a Stop issued there must abort the attempts registered
// by the carriers of the same process.
const holder = globalThis as {
  __cellflowAttempts?: Map<string, AbortController>;
  __cellflowCancelled?: Map<string, number>;
};
function registry(): Map<string, AbortController> {
  holder.__cellflowAttempts ??= new Map();
  return holder.__cellflowAttempts;
}

/**
 * Cancels that found no attempt here, remembered for a while: a carrier that claims a
 * cell in the same statement as its read registers the attempt only after the claim
 * committed, and a Stop's notice can arrive in between.
 */
function cancelledRecently(): Map<string, number> {
  holder.__cellflowCancelled ??= new Map();
  return holder.__cellflowCancelled;
}
const REMEMBER_MS = 10 * 60_000;
const REMEMBER_MAX = 100_000;

function remember(executionId: string): void {
  const seen = cancelledRecently();
  const now = Date.now();
  seen.set(executionId, now);
  // Insertion order is age order: drop from the front while too many or too old.
  for (const [id, at] of seen) {
    if (seen.size <= REMEMBER_MAX && now - at < REMEMBER_MS) break;
    seen.delete(id);
  }
}

/**
 * Registers a running attempt; the returned function unregisters it. An attempt whose
 * cancel already arrived is aborted at once.
 */
export function registerAttempt(executionId: string, controller: AbortController): () => void {
  registry().set(executionId, controller);
  if (cancelledRecently().delete(executionId)) controller.abort(new CancelledError());
  return () => {
    if (registry().get(executionId) === controller) registry().delete(executionId);
  };
}

/** Aborts the attempts of these executions running in this process; returns how many. */
export function abortLocal(executionIds: Iterable<string>): number {
  let n = 0;
  for (const id of executionIds) {
    const controller = registry().get(id);
    if (!controller) remember(id);
    else if (!controller.signal.aborted) {
      controller.abort(new CancelledError());
      n++;
    }
  }
  return n;
}

export function runningAttempts(): number {
  return registry().size;
}

/** How often an attempt the cancel NOTIFY cannot reach reads its tombstone. */
export const STOP_CHECK_MS = 2_000;

/**
 * Reads the attempt's cell every `everyMs` until the returned function is called, and
 * calls `onLost` once with the reason its cell is no longer its own (a Stop's tombstone,
 * a re-run, the row deleted). A read still in progress delays the next; one that fails
 * is reported and the next tick reads again (the fenced writes still decide).
 */
export function watchTombstone(
  db: Db,
  cell: { rowId: string; groupId: string; executionId: string; attempt: number },
  everyMs: number,
  onLost: (reason: LostReason) => void,
  onReadFailed: (err: unknown) => void,
): () => void {
  let reading = false;
  let done = false;
  const timer = setInterval(() => {
    if (reading || done) return;
    reading = true;
    void attemptLost(db, cell)
      .then((lost) => {
        if (lost && !done) {
          done = true;
          clearInterval(timer);
          onLost(lost);
        }
      }, onReadFailed)
      .finally(() => {
        reading = false;
      });
  }, everyMs);
  timer.unref();
  return () => {
    done = true;
    clearInterval(timer);
  };
}

// NOTIFY payloads are capped at 8000 bytes; ids are ~35 bytes.
const IDS_PER_NOTIFY = 150;

/** Tells every worker process to abort these executions. Delivered at commit. */
export async function publishCancel(db: Db, executionIds: string[]): Promise<void> {
  for (let i = 0; i < executionIds.length; i += IDS_PER_NOTIFY) {
    const chunk = executionIds.slice(i, i + IDS_PER_NOTIFY);
    await notify(db, CANCEL_CHANNEL, JSON.stringify(chunk));
  }
}

/** How long the cancel listener waits before asking the hub to LISTEN again after a failure. */
const RELISTEN_MS = 500;

/**
 * LISTENs for cancels through the process's LISTEN hub (events/hub.ts) and aborts
 * matching local attempts. The hub re-establishes a dropped session; a first LISTEN that
 * fails is asked again until it holds or `stop()` ends it.
 */
export function listenForCancels(
  hub: EventHub,
  log: Logger,
): { stop(): Promise<void>; ready: Promise<void> } {
  const stopping = new AbortController();
  let off: (() => void) | undefined;
  const onPayload = (payload: string) => {
    try {
      const ids = JSON.parse(payload) as unknown;
      if (Array.isArray(ids)) abortLocal(ids.filter((x): x is string => typeof x === "string"));
    } catch {
      log.warn({ payload: payload.slice(0, 200) }, "ignored a malformed cancel notification");
    }
  };
  const ready = (async () => {
    while (!stopping.signal.aborted) {
      try {
        off = await hub.listen(CANCEL_CHANNEL, onPayload);
        if (stopping.signal.aborted) off();
        return;
      } catch (err) {
        if (stopping.signal.aborted) return;
        log.warn({ err }, "cancel listener lost its connection; reconnecting");
        await sleep(RELISTEN_MS, stopping.signal).catch(() => {});
      }
    }
  })();
  return {
    ready,
    async stop() {
      stopping.abort();
      off?.();
      off = undefined;
    },
  };
}
