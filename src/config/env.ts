import { z } from "zod";
import { decodeSecretKey } from "@/security/secret-box";

/**
 * Every environment variable Cellflow reads, parsed once. `.env.example` documents the
 * same list; a test keeps the two in step.
 */
const emptyAsUndefined = (v: unknown) => (v === "" ? undefined : v);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());

/** 0 (default): http, llm and enrichment requests refuse private, loopback and link-local destinations. */
const allowPrivateNetworkFlag = z
  .preprocess(emptyAsUndefined, z.enum(["0", "1"], { error: "must be 0 or 1" }).default("0"))
  .transform((v) => v === "1");

/** One model's price: credits per 1,000 input and per 1,000 output tokens (absent: 0). */
const LlmPrice = z.strictObject({
  inputPer1k: z.number().min(0).max(1_000_000).default(0),
  outputPer1k: z.number().min(0).max(1_000_000).default(0),
});

/**
 * CELLFLOW_LLM_PRICES: JSON `{ "<model>": { "inputPer1k": credits, "outputPer1k": credits } }`.
 * Unset: every model costs nothing. A value that is not that shape fails at startup rather
 * than charging by a price nobody meant.
 */
export const llmPrices = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({
          code: "custom",
          message: 'must be JSON: { "<model>": { "inputPer1k": credits, "outputPer1k": credits } }',
        });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string().min(1), LlmPrice))
    .optional()
    .transform((prices) => prices ?? {}),
);

export const Env = z.object({
  DATABASE_URL: optionalString,
  DATABASE_URL_UNPOOLED: optionalString,
  DATABASE_DRIVER: z.preprocess(emptyAsUndefined, z.enum(["pg", "neon"]).default("pg")),
  DATABASE_POOL_MAX: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(2).default(20)),
  NEON_WS_PROXY: optionalString,
  CELLFLOW_DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(".data")),
  CELLFLOW_PG_PORT: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(65535).default(54329),
  ),
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3000)),
  HOST: z.preprocess(emptyAsUndefined, z.string().default("127.0.0.1")),
  CELLFLOW_API_KEY: optionalString,
  CELLFLOW_ADMIN_TOKEN: optionalString,
  /** `GET /api/metrics`'s bearer token; unset: the admin token guards it (neither: 404). */
  CELLFLOW_METRICS_TOKEN: optionalString,
  /** How often each process flushes its metrics into Postgres (default 10 s). */
  CELLFLOW_METRICS_FLUSH_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(600_000).default(10_000),
  ),
  CELLFLOW_SECRET_KEY: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .refine(
        (s) => decodeSecretKey(s) !== null,
        "must be 32 bytes written as 64 hex characters or as base64 (e.g. `openssl rand -base64 32`)",
      )
      .optional(),
  ),
  CELLFLOW_LLM_BASE_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  ),
  CELLFLOW_ANTHROPIC_BASE_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  ),
  CELLFLOW_ALLOW_PRIVATE_NETWORK: allowPrivateNetworkFlag,
  CELLFLOW_LLM_PRICES: llmPrices,
  TRIGGER_PROJECT_REF: optionalString,
  TRIGGER_SECRET_KEY: optionalString,
  TRIGGER_API_URL: optionalString,
  CELLFLOW_CANCEL_RATE_PER_SECOND: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().min(0.1).max(10_000).optional(),
  ),
  CELLFLOW_CANCEL_CONCURRENCY: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(200).optional(),
  ),
  CELLFLOW_CASCADE_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).optional(),
  ),
  CELLFLOW_ATTEMPT_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).optional(),
  ),
  CELLFLOW_RATE_LIMIT_PER_SECOND: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(100_000).optional(),
  ),
  /** How long one test run of a workflow (`POST /api/workflows/:id/test`) may take. */
  CELLFLOW_TEST_RUN_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(600_000).default(60_000),
  ),
  /** Calls per minute to one llm model per workspace, whatever the plan. */
  CELLFLOW_LLM_REQUESTS_PER_MINUTE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000).optional(),
  ),
  /** Tokens (input + output) per minute to one llm model per workspace, whatever the plan. */
  CELLFLOW_LLM_TOKENS_PER_MINUTE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000_000).optional(),
  ),
  /** Rows one table may hold, whatever the plan (unset: the plan's; API.md). */
  CELLFLOW_ROWS_PER_TABLE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000_000).optional(),
  ),
  /**
   * Rows a table needs before a sort or filter on it records an index to build
   * (services/row-indexes.ts; docs/api.md "Row indexes").
   */
  CELLFLOW_ROW_INDEX_MIN_ROWS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000_000).default(50_000),
  ),
  /** Rows one CSV import takes (unset: 1,000,000; API.md). */
  CELLFLOW_IMPORT_MAX_ROWS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000_000).optional(),
  ),
  /** Bytes one CSV import takes (unset: 500 MiB; API.md). */
  CELLFLOW_IMPORT_MAX_BYTES: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  ),
  CELLFLOW_REDRIVE_EVERY_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(3_600_000).optional(),
  ),
  /** The destinations' retry base: the n-th retry waits base·2ⁿ⁻¹ (at most an hour). */
  CELLFLOW_DESTINATION_RETRY_BASE_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(3_600_000).default(10_000),
  ),
  EVENTS_RETENTION_HOURS: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .min(1)
      .max(24 * 365)
      .default(72),
  ),
  /** How long paid enrichments' answers are reused per workspace; 0 turns the cache off. */
  CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .min(0)
      .max(24 * 365)
      .default(24),
  ),
  WORKER_CONCURRENCY: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(500).default(20),
  ),
  TASK_BACKEND: z.preprocess(emptyAsUndefined, z.enum(["local", "trigger"]).default("local")),
  UPSTASH_REDIS_REST_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  ),
  UPSTASH_REDIS_REST_TOKEN: optionalString,
  REDIS_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).optional(),
  ),
  /** Unset: Upstash, else REDIS_URL, else Postgres (src/limits/rate/instance.ts). */
  RATE_LIMITER: z.preprocess(
    emptyAsUndefined,
    z.enum(["upstash", "redis", "postgres", "memory"]).optional(),
  ),
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  /** `pretty`: coloured lines; `json`: JSON lines. Unset: pretty on a terminal, else JSON. */
  LOG_FORMAT: z.preprocess(emptyAsUndefined, z.enum(["json", "pretty"]).optional()),
  /**
   * Set: traces over OTLP/HTTP to this endpoint (src/tracing). Unset: none, and the SDK is
   * not loaded. The SDK reads these OTEL_* variables itself; they are parsed here so a
   * wrong value fails at start rather than being ignored by it.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  ),
  OTEL_TRACES_SAMPLER: z.preprocess(
    emptyAsUndefined,
    z
      .enum([
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
      ])
      .optional(),
  ),
  OTEL_TRACES_SAMPLER_ARG: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().min(0).max(1).optional(),
  ),
  OTEL_SERVICE_NAME: optionalString,
});
export type Env = z.infer<typeof Env>;

export function readEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = Env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/**
 * CELLFLOW_ALLOW_PRIVATE_NETWORK as it is now, read on every call rather than once at start,
 * so a test can turn the guard on for itself. A value that does not parse counts as 0: the
 * guard fails closed (`readEnv` at start has already reported it).
 */
export function allowPrivateNetwork(
  source: Record<string, string | undefined> = process.env,
): boolean {
  const parsed = allowPrivateNetworkFlag.safeParse(source.CELLFLOW_ALLOW_PRIVATE_NETWORK);
  return parsed.success && parsed.data;
}
