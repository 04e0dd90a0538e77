/**
 * Running one enrichment on one set of inputs. Invariants: the result always carries
 * every declared output id, null where nothing was found, so writing it blanks stale
 * values; a missing required input calls no provider (`skipped`); providers are tried in
 * order and the first non-empty answer wins; every provider finding nothing is
 * `not_found`, not an error, and costs nothing; only every provider failing (or none
 * being configured) throws, with each provider's reason; an abort is passed on as the
 * signal's reason, never recorded as a provider failure.
 */
import { redactedExcerpt } from "@/security/redact";
import {
  type Enrichment,
  type EnrichmentContext,
  type EnrichmentDetails,
  EnrichmentError,
  type EnrichmentResult,
  ProviderError,
  type ProviderReport,
} from "./types";

const MAX_ERROR_CHARS = 300;

/** Empty like an unfilled cell: absent, null, or blank text. */
export function isMissing(value: unknown): boolean {
  return (
    value === undefined || value === null || (typeof value === "string" && value.trim() === "")
  );
}

/** Every output id → null. */
export function blankOutputs(enrichment: Enrichment): Record<string, null> {
  return Object.fromEntries(enrichment.outputs.map((o) => [o.id, null]));
}

/** Keeps declared outputs only; blank text counts as nothing found. */
function cleanOutputs(
  enrichment: Enrichment,
  answer: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of enrichment.outputs) {
    const value = Object.hasOwn(answer, o.id) ? answer[o.id] : undefined;
    out[o.id] = isMissing(value) ? null : typeof value === "string" ? value.trim() : value;
  }
  return out;
}

/** Redacted before it is cut, so a cut cannot leave the start of a secret. */
function messageOf(err: unknown, secrets: Record<string, string>): string {
  const text = err instanceof Error ? err.message : String(err);
  return redactedExcerpt(text, secrets, MAX_ERROR_CHARS);
}

export async function runEnrichment<I>(
  enrichment: Enrichment<I>,
  rawInputs: Readonly<Record<string, unknown>>,
  ctx: EnrichmentContext,
): Promise<EnrichmentResult> {
  const secrets = ctx.secrets ?? {};
  const providers = enrichment.providers(secrets);
  const details: EnrichmentDetails = { enrichmentId: enrichment.id, costCredits: 0, providers: [] };
  const notCalled = (from: number): ProviderReport[] =>
    providers.slice(from).map((p) => ({ id: p.id, status: "skipped", costCredits: 0, ms: 0 }));

  const missing = enrichment.inputs
    .filter((i) => i.required && isMissing(rawInputs[i.id]))
    .map((i) => i.id);
  if (missing.length > 0) {
    details.providers = notCalled(0);
    details.missingInputs = missing;
    return { outcome: "skipped", outputs: blankOutputs(enrichment), details };
  }

  // Optional inputs left empty are absent, so their schema's `.optional()` applies.
  const present: Record<string, unknown> = {};
  for (const i of enrichment.inputs) {
    const value = rawInputs[i.id];
    if (!isMissing(value)) present[i.id] = value;
  }
  const parsed = enrichment.schema.safeParse(present);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((i) => `input "${i.path.join(".")}" ${i.message.toLowerCase()}`)
      .join("; ");
    // A wrongly typed input is a mapping mistake: trying again cannot help.
    throw new EnrichmentError(`The inputs are not valid: ${issues}`, details, false);
  }
  const inputs = parsed.data;

  if (providers.length === 0) {
    throw new EnrichmentError(
      enrichment.unconfigured ?? `No provider is configured for ${enrichment.name}`,
      details,
      false,
    );
  }

  let retryable = false;
  for (const [index, provider] of providers.entries()) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const grant = await ctx.beforeCall?.(provider.id, ctx.signal);
    const paced = grant ? { rateLimit: grant } : {};
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    let answer: Record<string, unknown> | null;
    try {
      answer = await provider.lookup(inputs, { signal: ctx.signal, secrets });
    } catch (err) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      retryable ||= !(err instanceof ProviderError) || err.retryable;
      if (err instanceof ProviderError && err.retryAfterMs !== undefined)
        ctx.providerBusy?.(provider.id, err.retryAfterMs);
      details.providers.push({
        id: provider.id,
        status: "error",
        costCredits: 0,
        ms: ms(),
        error: messageOf(err, secrets),
        ...paced,
      });
      continue;
    }
    const outputs = answer ? cleanOutputs(enrichment, answer) : null;
    if (!outputs || Object.values(outputs).every((v) => v === null)) {
      details.providers.push({
        id: provider.id,
        status: "empty",
        costCredits: 0,
        ms: ms(),
        ...paced,
      });
      continue;
    }
    const cost = provider.costCredits ?? enrichment.cost;
    details.providers.push({
      id: provider.id,
      status: "found",
      costCredits: cost,
      ms: ms(),
      ...paced,
    });
    details.providers.push(...notCalled(index + 1));
    details.costCredits = enrichment.cost;
    return { outcome: "ok", outputs, details };
  }

  const failed = details.providers.filter((p) => p.status === "error");
  if (failed.length === details.providers.length) {
    const reasons = failed.map((p) => `${p.id}: ${p.error ?? "failed"}`).join("; ");
    const what = failed.length === 1 ? "The provider failed" : "Every provider failed";
    throw new EnrichmentError(`${what} — ${reasons}`, details, retryable);
  }
  return { outcome: "not_found", outputs: blankOutputs(enrichment), details };
}
