/**
 * What an enrichment is. Invariant: an enrichment is pure description plus an ordered list
 * of providers; deciding outcomes (skipped, not_found, error), blanking and recording
 * per-provider details belongs to `run.ts` alone, so every built-in behaves the same way.
 */
import type { z } from "zod";
import type { ChargeKey } from "@/domain/charges";
import type { CellOutcome } from "@/domain/statuses";
import type { ProviderCallOutcome } from "@/metrics/registry";

/** Value types, named like column types so a mapping can be checked by eye. */
export type FieldType = "text" | "number" | "boolean" | "json";

export interface InputField {
  id: string;
  type: FieldType;
  /** A missing required input ends the run as `skipped`, before any provider is called. */
  required: boolean;
  description: string;
}

export interface OutputField {
  id: string;
  type: FieldType;
  description: string;
}

/** What a provider is given for one call. */
export interface ProviderCall {
  /** Aborts on Stop, attempt deadline or the provider's own time cap. */
  signal: AbortSignal;
  secrets: Readonly<Record<string, string>>;
}

/**
 * One source of answers. `lookup` resolves to output values (only declared output ids
 * count) or null when it found nothing; it throws (a `ProviderError` ideally) when it
 * could not tell, which is different from finding nothing.
 */
export interface Provider<I> {
  id: string;
  /** Credits a successful answer from this provider costs; the enrichment's cost by default. */
  costCredits?: number;
  lookup(inputs: I, call: ProviderCall): Promise<Record<string, unknown> | null>;
}

export interface Enrichment<I = unknown> {
  id: string;
  name: string;
  description: string;
  /** Credits per successful lookup (outcome `ok`); nothing for skipped or not_found. */
  cost: number;
  inputs: readonly InputField[];
  /** Validates the present inputs; required ones are non-optional fields. */
  schema: z.ZodType<I>;
  outputs: readonly OutputField[];
  /** Whether providers need the workspace's secrets (saves loading them otherwise). */
  needsSecrets: boolean;
  /** Providers in the order they are tried; built per run (some come from secrets). */
  providers(secrets: Readonly<Record<string, string>>): readonly Provider<I>[];
  /** What to tell people when `providers` is empty. */
  unconfigured?: string;
  /**
   * The inputs as the result cache keys them: two inputs that must get the same answer
   * (`ACME.com` and `acme.com`) normalize to the same value. Default: the inputs as parsed.
   */
  cacheInputs?(inputs: I): unknown;
}

/** An enrichment's outcome is its cell's. */
export type EnrichmentOutcome = CellOutcome;
export type ProviderStatus = "found" | "empty" | "error" | "skipped";

/** A rate limiter's go-ahead for one provider call. */
export interface CallGrant {
  /** The call's slot: when the limiter let it go (its clock, epoch ms). */
  at: number;
  /** How long the call waited for it. */
  waitedMs: number;
}

export interface ProviderReport {
  id: string;
  status: ProviderStatus;
  costCredits: number;
  /** The call itself, from the grant to the answer. */
  ms: number;
  error?: string;
  /** Set when a rate limiter paced the call: people see why a cell took long. */
  rateLimit?: CallGrant;
}

/** Recorded in the cell's `details`. */
export interface EnrichmentDetails {
  enrichmentId: string;
  /** What this run costs: the enrichment's cost when found, else 0 (see `cost`). */
  costCredits: number;
  providers: ProviderReport[];
  /** For `skipped`: the required inputs that were empty. */
  missingInputs?: string[];
  /** Answered from the workspace's result cache: no provider was called, nothing charged. */
  cached?: true;
  /** For a cached answer: how old it is. */
  ageMs?: number;
}

export interface EnrichmentResult {
  outcome: EnrichmentOutcome;
  /** Every declared output id; null where nothing was found (a stale value is blanked). */
  outputs: Record<string, unknown>;
  details: EnrichmentDetails;
}

export type BeforeCall = (
  providerId: string,
  signal: AbortSignal,
) => Promise<CallGrant | undefined>;

/** What a paid call is charged as: once per charge key, `credits` credits. */
export interface PaidCharge extends ChargeKey {
  credits: number;
}

/**
 * What stands in front of a charge's provider calls: its hooks of a run's context, the
 * key its calls reserve under, and a way to give the reservation back early.
 */
export type CallGate = Required<Pick<EnrichmentContext, "beforeCall" | "providerBusy">> &
  Pick<EnrichmentContext, "cache" | "onProviderCall"> & {
    charge: ChargeKey;
    /**
     * No answer of this charge will be recorded (nothing found, every provider failed, a
     * cached answer): give back what its calls reserved now. Harmless when nothing was.
     */
    release(): Promise<void>;
  };

/** The gate for one charge's provider calls (a reservation, then pacing for each call). */
export type PaidCalls = (charge: PaidCharge) => CallGate;

/**
 * Whether a result is a paid answer to charge for: found by a provider (outcome `ok`),
 * not served from the cache. Its reservation is settled by the write that records it.
 */
export function isPaidAnswer(result: EnrichmentResult): boolean {
  return (
    result.outcome === "ok" && result.details.cached !== true && result.details.costCredits > 0
  );
}

/** Hooks a caller may give a run, e.g. a rate limiter pacing calls per provider. */
export interface EnrichmentContext {
  signal: AbortSignal;
  secrets?: Readonly<Record<string, string>>;
  /**
   * Awaited before each provider call; a throw ends the run (it is not a provider
   * failure). A grant it returns is recorded in that provider's report.
   */
  beforeCall?: BeforeCall;
  /**
   * Told when a provider refused a call for now and said for how long (a 429 or 503 with
   * `Retry-After`): the pacing holds later calls to it that long instead of spending
   * them on more refusals.
   */
  providerBusy?: (providerId: string, retryAfterMs: number) => void;
  /** Answers already paid for (paid enrichments only; see `ResultCache`). */
  cache?: ResultCache;
  /**
   * Told what each provider call came to, and of an answer served from the cache (under
   * the first provider's id): the process's metrics count them.
   */
  onProviderCall?: (providerId: string, outcome: ProviderCallOutcome) => void;
}

/**
 * The workspace's store of paid answers. `lookup` gives a fresh answer for these inputs,
 * or a lease to ask the providers: kept when they answer (`ok` or `not_found`), dropped
 * when they fail (errors are never cached). While a lease is out, other lookups of the
 * same key wait for its answer (single flight).
 */
export interface ResultCache {
  lookup(enrichmentId: string, inputKey: string, signal: AbortSignal): Promise<CacheLookup>;
}

export type CacheLookup =
  | {
      kind: "hit";
      /** A cached answer is never `skipped`: a skip calls no provider and is not cached. */
      outcome: Exclude<CellOutcome, "skipped">;
      outputs: Record<string, unknown>;
      ageMs: number;
    }
  | {
      kind: "lease";
      /**
       * Keeps the answer. `paidBy`: the charge keys whose charge pays for it (none: free);
       * it is not served again once their charge was released (store/enrichment-cache/paid-state.ts).
       */
      keep(result: EnrichmentResult, paidBy?: readonly ChargeKey[]): Promise<void>;
      drop(): Promise<void>;
    };

/**
 * A provider failure with a message meant for people; `retryable` if trying later may
 * help, `retryAfterMs` when the provider said when (its `Retry-After`, capped).
 */
export class ProviderError extends Error {
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    readonly retryable = true,
    options: ErrorOptions & { retryAfterMs?: number | undefined } = {},
  ) {
    super(message, options);
    this.name = "ProviderError";
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The run could not tell: every provider failed, none is configured, or an input has the
 * wrong type. `details` says what each provider did.
 */
export class EnrichmentError extends Error {
  constructor(
    message: string,
    readonly details: EnrichmentDetails,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "EnrichmentError";
  }
}
