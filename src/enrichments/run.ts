/**
 * Running one enrichment on one set of inputs. Invariants: the result always carries
 * every declared output id, null where nothing was found, so writing it blanks stale
 * values; a missing required input calls no provider (`skipped`); providers are tried in
 * order and the first non-empty answer wins; every provider finding nothing is
 * `not_found`, not an error, and costs nothing; only every provider failing (or none
 * being configured) throws, with each provider's reason; an abort is passed on as the
 * signal's reason, never recorded as a provider failure. A paid enrichment given a result
 * cache asks it first: a fresh answer is the result (no provider called, nothing
 * charged), and only an answer (`ok`, `not_found`) is kept in it, never a failure.
 * Each provider's call is a span (the child of its block's or attempt's) with the
 * provider, its outcome and the credits an answer found costs.
 */
import { redactedExcerpt } from "@/security/redact";
import { type Span, SpanKind, startSpan } from "@/tracing/spans";
import { cacheKeyOf } from "./cache-key";
import {
  type Enrichment,
  type EnrichmentContext,
  type EnrichmentDetails,
  EnrichmentError,
  type EnrichmentResult,
  type Provider,
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

/** The providers from `from` on, as not called. */
function notCalled(providers: readonly { id: string }[], from: number): ProviderReport[] {
  return providers.slice(from).map((p) => ({ id: p.id, status: "skipped", costCredits: 0, ms: 0 }));
}

/** Redacted before it is cut, so a cut cannot leave the start of a secret. */
function messageOf(err: unknown, secrets: Record<string, string>): string {
  const text = err instanceof Error ? err.message : String(err);
  return redactedExcerpt(text, secrets, MAX_ERROR_CHARS);
}

export type ReadInputs<I> =
  | { kind: "ok"; inputs: I }
  | { kind: "missing"; missing: string[] }
  | { kind: "invalid"; issues: string };

/**
 * The inputs a run would call its providers with: required ones present, the present ones
 * valid for the enrichment's schema (optional inputs left empty are absent, so their
 * schema's `.optional()` applies).
 */
export function readInputs<I>(
  enrichment: Enrichment<I>,
  rawInputs: Readonly<Record<string, unknown>>,
): ReadInputs<I> {
  const missing = enrichment.inputs
    .filter((i) => i.required && isMissing(rawInputs[i.id]))
    .map((i) => i.id);
  if (missing.length > 0) return { kind: "missing", missing };
  const present: Record<string, unknown> = {};
  for (const i of enrichment.inputs) {
    const value = rawInputs[i.id];
    if (!isMissing(value)) present[i.id] = value;
  }
  const parsed = enrichment.schema.safeParse(present);
  if (parsed.success) return { kind: "ok", inputs: parsed.data };
  const issues = parsed.error.issues
    .map((i) => `input "${i.path.join(".")}" ${i.message.toLowerCase()}`)
    .join("; ");
  return { kind: "invalid", issues };
}

export async function runEnrichment<I>(
  enrichment: Enrichment<I>,
  rawInputs: Readonly<Record<string, unknown>>,
  ctx: EnrichmentContext,
): Promise<EnrichmentResult> {
  const secrets = ctx.secrets ?? {};
  const providers = enrichment.providers(secrets);
  const details: EnrichmentDetails = { enrichmentId: enrichment.id, costCredits: 0, providers: [] };

  const read = readInputs(enrichment, rawInputs);
  if (read.kind === "missing") {
    details.providers = notCalled(providers, 0);
    details.missingInputs = read.missing;
    return { outcome: "skipped", outputs: blankOutputs(enrichment), details };
  }
  if (read.kind === "invalid") {
    // A wrongly typed input is a mapping mistake: trying again cannot help.
    throw new EnrichmentError(`The inputs are not valid: ${read.issues}`, details, false);
  }
  const inputs = read.inputs;

  if (providers.length === 0) {
    throw new EnrichmentError(
      enrichment.unconfigured ?? `No provider is configured for ${enrichment.name}`,
      details,
      false,
    );
  }

  const lookup =
    ctx.cache && enrichment.cost > 0
      ? await ctx.cache.lookup(enrichment.id, cacheKeyOf(enrichment, inputs), ctx.signal)
      : undefined;
  if (lookup?.kind === "hit") {
    const { outcome, outputs, ageMs } = lookup;
    ctx.onProviderCall?.(providers[0]?.id ?? enrichment.id, "cached");
    return {
      outcome,
      // Declared outputs only: an answer kept before an output was dropped writes none of it.
      outputs: cleanOutputs(enrichment, outputs),
      details: { ...details, providers: notCalled(providers, 0), cached: true, ageMs },
    };
  }
  let result: EnrichmentResult;
  try {
    result = await askProviders(enrichment, inputs, providers, details, secrets, ctx);
  } catch (err) {
    await lookup?.drop();
    throw err;
  }
  await lookup?.keep(result);
  return result;
}

/** The providers in order, until one answers (see the header for what each end means). */
async function askProviders<I>(
  enrichment: Enrichment<I>,
  inputs: I,
  providers: readonly Provider<I>[],
  details: EnrichmentDetails,
  secrets: Record<string, string>,
  ctx: EnrichmentContext,
): Promise<EnrichmentResult> {
  let retryable = false;
  for (const [index, provider] of providers.entries()) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const grant = await ctx.beforeCall?.(provider.id, ctx.signal);
    const paced = grant ? { rateLimit: grant } : {};
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    let answer: Record<string, unknown> | null;
    const span = providerSpan(enrichment.id, provider.id);
    try {
      answer = await provider.lookup(inputs, { signal: ctx.signal, secrets });
    } catch (err) {
      if (ctx.signal.aborted) {
        endCall(span, "aborted");
        throw ctx.signal.reason;
      }
      retryable ||= !(err instanceof ProviderError) || err.retryable;
      const refused = err instanceof ProviderError && err.retryAfterMs !== undefined;
      endCall(span, refused ? "refused" : "error");
      ctx.onProviderCall?.(provider.id, refused ? "refused" : "error");
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
    let outputs: ReturnType<typeof cleanOutputs> | null;
    try {
      outputs = answer ? cleanOutputs(enrichment, answer) : null;
    } catch (err) {
      // An answer that cannot be read ends its span too: the throw is the attempt's.
      endCall(span, "error");
      throw err;
    }
    if (!outputs || Object.values(outputs).every((v) => v === null)) {
      endCall(span, "empty");
      ctx.onProviderCall?.(provider.id, "empty");
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
    endCall(span, "found", cost);
    ctx.onProviderCall?.(provider.id, "found");
    details.providers.push({
      id: provider.id,
      status: "found",
      costCredits: cost,
      ms: ms(),
      ...paced,
    });
    details.providers.push(...notCalled(providers, index + 1));
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

/** A provider's call, as a client span (the no-op span when nothing records). */
function providerSpan(enrichmentId: string, providerId: string): Span {
  return startSpan(
    "provider call",
    () => ({ "cellflow.provider": providerId, "cellflow.enrichment.id": enrichmentId }),
    SpanKind.CLIENT,
  );
}

function endCall(span: Span, outcome: string, credits?: number): void {
  if (span.isRecording()) {
    span.setAttribute("cellflow.provider.outcome", outcome);
    if (credits !== undefined) span.setAttribute("cellflow.credits", credits);
  }
  span.end();
}
