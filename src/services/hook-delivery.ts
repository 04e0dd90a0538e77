/**
 * `POST /api/hooks/:hookId`: a signed request from outside acts on a table as its hook
 * says. Order matters: the signature is checked before the body is even decoded, so an
 * unsigned caller learns nothing beyond "401"; replays are answered from the record of
 * the first delivery.
 */
import { randomBytes } from "node:crypto";
import type { HookRowsInserted } from "@/contracts/hooks";
import { InsertRowsRequest, type RowView } from "@/contracts/rows";
import { CreateRunRequest } from "@/contracts/runs";
import { conflict, type Failure, invalid, unauthorized } from "@/domain/errors";
import { idempotencyKeyOf } from "@/domain/idempotency-key";
import { parseJsonText } from "@/domain/json-text";
import type { Result } from "@/domain/result";
import { assertNever } from "@/domain/statuses";
import { openSecret } from "@/security/secret-box";
import { serverSecretKey } from "@/security/secret-key";
import {
  deliveryDigest,
  isFresh,
  parseSignatureHeader,
  SIGNATURE_TOLERANCE_SECONDS,
  signatureMatches,
} from "@/security/signature";
import { claimDelivery, type DeliveryClaim } from "@/store/hook-deliveries/claim";
import { completeDelivery } from "@/store/hook-deliveries/complete";
import { releaseDelivery } from "@/store/hook-deliveries/release";
import { type LiveHook, liveHook } from "@/store/hooks/read";
import type { ServiceContext } from "./context";
import { fireStoredRows, storeRows } from "./rows";
import { createRun } from "./runs";

/** A delivery comes with no API key: the workspace is the hook's, known once it verifies. */
export type DeliveryContext = Omit<ServiceContext, "workspaceId">;

export interface Delivered {
  status: number;
  body: unknown;
  /**
   * True when this answers a replay: from the record of the first delivery, or the run
   * the delivery's Idempotency-Key started before.
   */
  replayed: boolean;
}

const ACCEPTED = 202;

/** Checked against for hooks that cannot verify anything, so they cost what a real one does. */
const UNUSABLE_SECRET = randomBytes(32).toString("base64url");

const BAD_SIGNATURE = "The signature does not match";

/** The delivery's headers that matter: its signature, and a `run` hook's Idempotency-Key. */
export interface DeliveryHeaders {
  signature: string | null;
  idempotencyKey: string | null;
}

export async function deliverHook(
  sys: DeliveryContext,
  hookId: string,
  body: Uint8Array,
  headers: DeliveryHeaders,
): Promise<Result<Delivered, Failure>> {
  const sig = parseSignatureHeader(headers.signature);
  if (!sig) {
    return refuse(
      unauthorized(
        'Sign the request: `Cellflow-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`',
      ),
    );
  }
  if (!isFresh(sig, Date.now())) {
    return refuse(
      unauthorized(
        `The signature's t is more than ${SIGNATURE_TOLERANCE_SECONDS} s away from the server clock`,
      ),
    );
  }
  const hook = await liveHook(sys.db, hookId);
  const secret = hook ? hookSecret(sys, hook) : null;
  // Unknown, revoked and unreadable hooks answer exactly as a wrong signature does, after
  // the same work, so a caller cannot tell whether an id exists.
  const verified = signatureMatches(secret ?? UNUSABLE_SECRET, sig, body);
  if (!hook || secret === null || !verified) return refuse(unauthorized(BAD_SIGNATURE));

  const ctx: ServiceContext = {
    ...sys,
    workspaceId: hook.workspaceId,
    log: sys.log.child({ workspaceId: hook.workspaceId, hookId: hook.id }),
  };
  const digest = deliveryDigest(sig.t, body);
  // The bytes are decoded (strict UTF-8) and checked as every JSON route's body is, so the
  // contracts behave identically.
  switch (hook.action) {
    case "insert_rows": {
      const req = parseJsonText(body, InsertRowsRequest);
      if (!req.ok) return refuse(invalid(req.reason.issues, req.reason.message));
      return insertOnce(ctx, hook, digest, req.value);
    }
    case "run": {
      const key = idempotencyKeyOf(headers.idempotencyKey);
      if (!key.ok) return key;
      const req = parseJsonText(body, CreateRunRequest);
      if (!req.ok) return refuse(invalid(req.reason.issues, req.reason.message));
      return runOnce(ctx, hook, digest, req.value, key.value);
    }
    default:
      return assertNever(hook.action);
  }
}

function refuse(reason: Failure): { ok: false; reason: Failure } {
  return { ok: false, reason };
}

/** The hook's plain secret; null (and an error in the log) when it cannot be opened. */
function hookSecret(sys: DeliveryContext, hook: LiveHook): string | null {
  const key = serverSecretKey();
  if (!key) {
    sys.log.error(
      { hookId: hook.id },
      "CELLFLOW_SECRET_KEY is not set: webhook deliveries cannot be verified",
    );
    return null;
  }
  const opened = openSecret(key, hook.secretCiphertext);
  if (!opened.ok) {
    sys.log.error(
      { hookId: hook.id, reason: opened.reason },
      "a webhook secret cannot be decrypted; was CELLFLOW_SECRET_KEY changed since the hook was created?",
    );
    return null;
  }
  return opened.value;
}

function replayOf(claim: Extract<DeliveryClaim, { claimed: false }>): Result<Delivered, Failure> {
  if (claim.statusCode === null) {
    return refuse(
      conflict(
        "This delivery (same t and body) was received before and has not completed; retry later, or sign it again with a new t",
      ),
    );
  }
  return { ok: true, value: { status: claim.statusCode, body: claim.response, replayed: true } };
}

type InsertStep =
  | { kind: "replay"; claim: Extract<DeliveryClaim, { claimed: false }> }
  | { kind: "refused"; reason: Failure }
  | { kind: "stored"; rows: RowView[]; answer: HookRowsInserted };

/**
 * The claim, the rows and the recorded answer commit together, so a delivery's rows exist
 * if and only if it is recorded; a concurrent copy waits on the claim and then replays.
 * Auto-run fires after the commit, as it does for POST /rows.
 */
async function insertOnce(
  ctx: ServiceContext,
  hook: LiveHook,
  digest: string,
  req: InsertRowsRequest,
): Promise<Result<Delivered, Failure>> {
  const step = await ctx.db.transaction(async (tx): Promise<InsertStep> => {
    const claim = await claimDelivery(tx, { hookId: hook.id, digest });
    if (!claim.claimed) return { kind: "replay", claim };
    const stored = await storeRows({ ...ctx, db: tx }, hook.tableId, req);
    if (!stored.ok) {
      await releaseDelivery(tx, { hookId: hook.id, digest });
      return { kind: "refused", reason: stored.reason };
    }
    const answer = { inserted: stored.value.length, rowIds: stored.value.map((r) => r.id) };
    await completeDelivery(tx, {
      hookId: hook.id,
      digest,
      statusCode: ACCEPTED,
      response: answer,
    });
    return { kind: "stored", rows: stored.value, answer };
  });
  switch (step.kind) {
    case "replay":
      return replayOf(step.claim);
    case "refused":
      return refuse(step.reason);
    case "stored":
      await fireStoredRows(ctx, hook.tableId, step.rows);
      ctx.log.info({ tableId: hook.tableId, inserted: step.answer.inserted }, "hook delivered");
      return { ok: true, value: { status: ACCEPTED, body: step.answer, replayed: false } };
    default:
      return assertNever(step);
  }
}

/**
 * A run enqueues carriers on other connections, so it cannot share a transaction with
 * the claim: the claim commits first, and a concurrent copy sees it in progress (409).
 * If the run throws, the claim stays: the run may have started, and a replay must not
 * start a second one. A copy signed again (a new `t`) is a new delivery: only its
 * `Idempotency-Key` (the run's own, shared with POST /runs on the table) keeps it from
 * starting a second run.
 */
async function runOnce(
  ctx: ServiceContext,
  hook: LiveHook,
  digest: string,
  req: CreateRunRequest,
  idempotencyKey: string | null,
): Promise<Result<Delivered, Failure>> {
  const claim = await claimDelivery(ctx.db, { hookId: hook.id, digest });
  if (!claim.claimed) return replayOf(claim);
  const run = await createRun(ctx, hook.tableId, req, idempotencyKey);
  if (!run.ok) {
    await releaseDelivery(ctx.db, { hookId: hook.id, digest });
    return run;
  }
  await completeDelivery(ctx.db, {
    hookId: hook.id,
    digest,
    statusCode: ACCEPTED,
    response: run.value.run,
  });
  const { run: started, replayed } = run.value;
  ctx.log.info(
    { tableId: hook.tableId, dispatchId: started.dispatchId, replayed },
    "hook delivered",
  );
  return { ok: true, value: { status: ACCEPTED, body: started, replayed } };
}
