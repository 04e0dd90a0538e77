/**
 * Sends the destinations' outbox: one pass drains the cell-end marks into deliveries
 * (store/destinations/drain-marks.ts), claims what is due (store/destinations/claim.ts:
 * order per row, the in-flight cap and the lease are kept there) and posts each claimed
 * delivery, signed with its destination's secret, then settles it. Invariant: a delivery
 * is always sent with the body stored when it was made, under its own id, whichever
 * process sends it and however often; only a 2xx settles it as delivered, so a process
 * that dies mid-send leaves it to its lease and it is sent again.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import { DEFAULT_RETRY_BASE_MS, isRetryableStatus, nextRetry } from "@/domain/delivery-backoff";
import { DestinationRefused, outboundFetch } from "@/net/outbound";
import { openSecret } from "@/security/secret-box";
import { serverSecretKey } from "@/security/secret-key";
import { signatureFor } from "@/security/signature";
import {
  type ClaimedDelivery,
  claimDeliveries,
  destinationsWithDueDeliveries,
} from "@/store/destinations/claim";
import { DRAIN_BATCH, drainDestinationMarks } from "@/store/destinations/drain-marks";
import { type DeliveryOutcome, settleDelivery } from "@/store/destinations/settle";

/** In flight at once per destination (API.md). */
export const DESTINATION_IN_FLIGHT_CAP = 10;
/** A receiver that has not answered by then counts as a timeout (retried). */
export const DESTINATION_TIMEOUT_MS = 10_000;

export interface SenderSettings {
  db: Db;
  log: Logger;
  now: () => Date;
  random: () => number;
  retryBaseMs: number;
  timeoutMs: number;
  /** Longer than a send can take, so a live sender's lease never runs out under it. */
  leaseMs: number;
  cap: number;
  /** Marks that choose one drain pass's rows. */
  drainBatch: number;
  /** Drain passes before a claim (then it drains again): a flood never holds sends up. */
  drainPasses: number;
}

export function senderSettings(
  base: Pick<SenderSettings, "db" | "log"> & Partial<SenderSettings>,
): SenderSettings {
  const timeoutMs = base.timeoutMs ?? DESTINATION_TIMEOUT_MS;
  return {
    now: () => new Date(),
    random: Math.random,
    retryBaseMs: DEFAULT_RETRY_BASE_MS,
    cap: DESTINATION_IN_FLIGHT_CAP,
    drainBatch: DRAIN_BATCH,
    drainPasses: DRAIN_PASSES,
    ...base,
    timeoutMs,
    leaseMs: base.leaseMs ?? timeoutMs * 3,
  };
}

/** Drain passes per turn before the sender claims: 20,000 marks at the default batch. */
export const DRAIN_PASSES = 10;

export interface Drained {
  deliveries: number;
  /** The last pass was full (or the turn ran out of passes): marks may be left. */
  more: boolean;
}

/**
 * Moves the pending marks into the outbox, pass after pass, until a pass finds fewer
 * marks than a batch (the rest end after it began: the next turn takes them), the turn's
 * passes run out, or `stopping` aborts: cells that keep ending never keep the caller from
 * claiming, nor a stop from returning.
 */
export async function drainAllMarks(s: SenderSettings, stopping?: AbortSignal): Promise<Drained> {
  let deliveries = 0;
  for (let pass = 0; pass < s.drainPasses && !stopping?.aborted; pass++) {
    const r = await drainDestinationMarks(s.db, s.now(), s.drainBatch);
    if (!r) return { deliveries, more: false };
    deliveries += r.deliveries;
    if (r.marks < s.drainBatch) return { deliveries, more: false };
  }
  return { deliveries, more: true };
}

/**
 * Claims what is due on every destination, one after another; `start` gets each
 * destination's claims as soon as they are made (so a lease is not spent waiting on the
 * claims of the destinations after it), and each lease is counted from the time of its
 * own claim. The claimed deliveries, all of them.
 */
export async function claimDue(
  s: SenderSettings,
  start?: (d: ClaimedDelivery) => void,
): Promise<ClaimedDelivery[]> {
  const claimed: ClaimedDelivery[] = [];
  for (const id of await destinationsWithDueDeliveries(s.db, s.now())) {
    const mine = await claimDeliveries(s.db, id, { now: s.now(), cap: s.cap, leaseMs: s.leaseMs });
    if (start) for (const d of mine) start(d);
    claimed.push(...mine);
  }
  return claimed;
}

/** Posts one claimed delivery and settles it; false when its lease was lost meanwhile. */
export async function sendDelivery(
  s: SenderSettings,
  d: ClaimedDelivery,
  stopping?: AbortSignal,
): Promise<boolean> {
  const outcome = await post(s, d, stopping);
  const settled = await settleDelivery(s.db, d, outcome, s.now());
  if (outcome.kind !== "delivered")
    s.log.info(
      { deliveryId: d.id, destinationId: d.destinationId, ...outcome },
      "delivery not accepted",
    );
  return settled;
}

async function post(
  s: SenderSettings,
  d: ClaimedDelivery,
  stopping?: AbortSignal,
): Promise<DeliveryOutcome> {
  const secret = secretOf(s, d);
  if (secret === null) return retryOrFail(s, d, "the destination's secret cannot be opened");
  const body = Buffer.from(d.body, "utf8");
  const t = String(Math.floor(s.now().getTime() / 1000));
  const v1 = signatureFor(secret, t, body).toString("hex");
  const timeout = AbortSignal.timeout(s.timeoutMs);
  const signal = stopping ? AbortSignal.any([timeout, stopping]) : timeout;
  try {
    const res = await outboundFetch(d.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "cellflow-signature": `t=${t},v1=${v1}`,
        "cellflow-delivery": d.id,
      },
      body,
      signal,
      // A redirect would re-post the row elsewhere than the destination the user named.
      redirect: "manual",
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { kind: "delivered" };
    const error = `HTTP ${res.status}`;
    return isRetryableStatus(res.status) ? retryOrFail(s, d, error) : { kind: "failed", error };
  } catch (err) {
    if (err instanceof DestinationRefused) return { kind: "failed", error: err.message };
    if (err instanceof TypeError && /Invalid URL/i.test(err.message))
      return { kind: "failed", error: err.message };
    // A shutdown is not the receiver's failure: the delivery is due again at once.
    if (stopping?.aborted && !timeout.aborted)
      return { kind: "retry", error: "the sender stopped", at: s.now() };
    const error = timeout.aborted ? `timed out after ${s.timeoutMs} ms` : networkError(err);
    return retryOrFail(s, d, error);
  }
}

function retryOrFail(s: SenderSettings, d: ClaimedDelivery, error: string): DeliveryOutcome {
  const v = nextRetry({
    attempt: d.attempts,
    createdAtMs: d.createdAtMs,
    nowMs: s.now().getTime(),
    baseMs: s.retryBaseMs,
    random: s.random(),
  });
  return v.retry ? { kind: "retry", error, at: new Date(v.at) } : { kind: "failed", error };
}

function networkError(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === "string" ? `${code}: ${message}` : message;
}

/** The destination's plain secret; null (and an error in the log) when it cannot be opened. */
function secretOf(s: SenderSettings, d: ClaimedDelivery): string | null {
  const key = serverSecretKey();
  if (!key) {
    // A deployment fault: every delivery waits on it, so it is an error, not a retry's note.
    s.log.error(
      { deliveryId: d.id, destinationId: d.destinationId },
      "CELLFLOW_SECRET_KEY is not set: destination deliveries cannot be signed",
    );
    return null;
  }
  const opened = openSecret(key, d.secretCiphertext);
  if (opened.ok) return opened.value;
  s.log.error(
    { deliveryId: d.id, destinationId: d.destinationId },
    "a destination secret cannot be decrypted; was CELLFLOW_SECRET_KEY changed since the destination was created?",
  );
  return null;
}
