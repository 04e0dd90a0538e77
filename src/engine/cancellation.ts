/**
 * How a Stop reaches a running attempt: (1) the DB tombstone every write checks, which
 * alone guarantees correctness; (2) this process's registry of AbortControllers keyed by
 * execution id, for promptness; (3) a NOTIFY on `cellflow_cancel` that every worker
 * process LISTENs to and feeds into its own registry.
 */
import type { Db, SessionClient, SessionPool } from "@db/client";
import type { Logger } from "@/config/log";
import { CancelledError } from "@/errors";
import { listen, unlisten } from "@/store/notify/listen";
import { notify } from "@/store/notify/publish";

export const CANCEL_CHANNEL = "cellflow_cancel";

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

// NOTIFY payloads are capped at 8000 bytes; ids are ~35 bytes.
const IDS_PER_NOTIFY = 150;

/** Tells every worker process to abort these executions. Delivered at commit. */
export async function publishCancel(db: Db, executionIds: string[]): Promise<void> {
  for (let i = 0; i < executionIds.length; i += IDS_PER_NOTIFY) {
    const chunk = executionIds.slice(i, i + IDS_PER_NOTIFY);
    await notify(db, CANCEL_CHANNEL, JSON.stringify(chunk));
  }
}

/**
 * LISTENs for cancels on a dedicated session and aborts matching local attempts.
 * Reconnects after a dropped connection; `stop()` ends it.
 */
export function listenForCancels(
  pool: SessionPool,
  log: Logger,
): { stop(): Promise<void>; ready: Promise<void> } {
  let client: SessionClient | undefined;
  let stopped = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    markReady = r;
  });
  const connect = async (): Promise<void> => {
    while (!stopped) {
      let c: SessionClient | undefined;
      // A LISTEN session never goes back to the pool: destroyed, it frees its slot. Not
      // when stop() took it (and destroys it itself).
      const drop = () => {
        if (c && client === c) {
          client = undefined;
          c.release(true);
        }
      };
      try {
        c = await pool.connect();
        client = c;
        if (stopped) return drop();
        c.on("notification", (msg) => {
          if (msg.channel !== CANCEL_CHANNEL || !msg.payload) return;
          try {
            const ids = JSON.parse(msg.payload) as unknown;
            if (Array.isArray(ids))
              abortLocal(ids.filter((x): x is string => typeof x === "string"));
          } catch {
            log.warn(
              { payload: msg.payload.slice(0, 200) },
              "ignored a malformed cancel notification",
            );
          }
        });
        const session = c;
        const dropped = new Promise<void>((resolve) => session.on("error", () => resolve()));
        await listen(c, CANCEL_CHANNEL);
        markReady();
        await dropped;
        drop();
      } catch (err) {
        // Connected, then LISTEN failed (the server going away): without this the session
        // stayed checked out for good, and a pool with leaked sessions never ends.
        drop();
        if (stopped) return;
        log.warn({ err }, "cancel listener lost its connection; reconnecting");
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  void connect();
  return {
    ready,
    async stop() {
      stopped = true;
      const c = client;
      client = undefined;
      if (c) {
        await unlisten(c, CANCEL_CHANNEL).catch(() => {});
        c.release(true);
      }
    },
  };
}
