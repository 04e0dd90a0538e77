import { IDEMPOTENCY_KEY_HEADER } from "@/domain/idempotency-key";
import { MAX_JSON_BODY, readBodyBytes } from "@/http/body";
import { publicRoute, systemContext } from "@/http/handler";
import { failureResponse, json } from "@/http/respond";
import { SIGNATURE_HEADER } from "@/security/signature";
import { deliverHook } from "@/services/hook-delivery";

/** Signed instead of keyed: the signature covers the raw bytes, so they are read as sent. */
export const POST = publicRoute<{ hookId: string }>(async (req, { hookId }) => {
  const body = await readBodyBytes(req, MAX_JSON_BODY);
  const sent = await deliverHook(systemContext(), hookId, body, {
    signature: req.headers.get(SIGNATURE_HEADER),
    idempotencyKey: req.headers.get(IDEMPOTENCY_KEY_HEADER),
  });
  if (!sent.ok) return failureResponse(sent.reason);
  const { status, body: answer, replayed } = sent.value;
  return json(answer, status, replayed ? { "cellflow-replayed": "true" } : {});
});
