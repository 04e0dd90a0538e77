/**
 * The work of an attempt on a group of kind `enrichment`: group inputs from the row, one
 * registry run, and the terminal write it implies. Invariants: every output column of the
 * group is written (null blanks it), so a skipped, not_found or partial run never leaves
 * a stale value; the cell's `details` record what each provider did, whatever the end;
 * a provider's answer (outcome `ok`, not cached) is charged by the terminal write that
 * records it, and the reservation of any other end is given back here;
 * every provider failing is an `error` with their reasons; nothing that leaves here
 * carries a secret's value. An abort is rethrown for the attempt to classify.
 */

import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import type { EnrichmentGroup } from "@/contracts/table";
import { groupInputs } from "@/domain/table-schema";
import { getEnrichment } from "@/enrichments/registry";
import { runEnrichment } from "@/enrichments/run";
import {
  type CallGate,
  EnrichmentError,
  type EnrichmentResult,
  isPaidAnswer,
} from "@/enrichments/types";
import { redact, redactText } from "@/security/redact";
import type { Terminal } from "@/store/cells/finish";
import { loadSecrets } from "@/store/secrets/read";

export interface EnrichmentAttempt {
  db: Db;
  log: Logger;
  workspaceId: string;
  group: EnrichmentGroup;
  data: Record<string, unknown>;
  signal: AbortSignal;
  /** In front of each provider call (admission, a rate limiter's pacing). */
  gate?: CallGate;
}

export async function enrichmentTerminal(a: EnrichmentAttempt): Promise<Terminal> {
  const { group } = a;
  const enrichment = getEnrichment(group.enrichmentId);
  if (!enrichment) {
    return {
      kind: "fail",
      message: `The enrichment "${group.enrichmentId}" does not exist`,
      finish: { blockErrors: {} },
    };
  }
  const inputs = groupInputs(group, a.data);
  const secrets = enrichment.needsSecrets ? await loadSecrets(a.db, a.workspaceId, a.log) : {};

  let result: EnrichmentResult;
  try {
    result = await runEnrichment(enrichment, inputs, {
      signal: a.signal,
      secrets,
      ...a.gate,
    });
  } catch (err) {
    // No answer to record: what the calls reserved goes back now (an abort's end releases it too).
    await a.gate?.release();
    if (a.signal.aborted) throw a.signal.reason;
    if (!(err instanceof EnrichmentError)) throw err;
    return {
      kind: "fail",
      message: redactText(err.message, secrets),
      finish: { blockErrors: {}, details: redact({ ...err.details }, secrets) },
    };
  }
  if (a.signal.aborted) throw a.signal.reason;
  const outputs: Record<string, unknown> = {};
  for (const o of group.outputs) outputs[o.columnId] = result.outputs[o.from] ?? null;
  // A provider's answer is charged by the terminal write that records it; anything else
  // (nothing found, a cached answer) gives its reservation back.
  const paid = a.gate && isPaidAnswer(result) ? [a.gate.charge] : [];
  if (paid.length === 0) await a.gate?.release();
  return {
    kind: "complete",
    outcome: result.outcome,
    finish: {
      blockErrors: {},
      outputs: redact(outputs, secrets),
      details: redact({ ...result.details }, secrets),
      charges: paid,
    },
  };
}
