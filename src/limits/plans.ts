import { readEnv } from "@/config/env";
import { assertNever, PLANS, type Plan } from "@/domain/statuses";

export interface PlanLimits {
  /** Rows of one dispatch in flight at once. */
  window: number;
  /** One deadline for a whole row cascade. */
  cascadeTimeoutMs: number;
  /** One deadline per attempt (one group on one row). */
  attemptTimeoutMs: number;
  /** Credits a workspace may spend per UTC month; null: no cap. */
  monthlyCredits: number | null;
  /** Calls per second to one provider, per workspace (the shared rate limit). */
  rateLimitPerSecond: number;
  /** Calls per minute to one llm model, per workspace (shared by every worker). */
  llmRequestsPerMinute: number;
  /** Tokens (input + output) per minute to one llm model, per workspace. */
  llmTokensPerMinute: number;
  /** Rows one table may hold; null: no cap. */
  rowsPerTable: number | null;
}

/**
 * The plan's limits, with the deadlines and the provider rate overridable for the whole
 * deployment (CELLFLOW_CASCADE_TIMEOUT_MS, CELLFLOW_ATTEMPT_TIMEOUT_MS,
 * CELLFLOW_RATE_LIMIT_PER_SECOND: what a provider contract allows, whatever the plan; and
 * CELLFLOW_LLM_REQUESTS_PER_MINUTE / CELLFLOW_LLM_TOKENS_PER_MINUTE for llm models), and
 * the rows per table (CELLFLOW_ROWS_PER_TABLE: what the deployment's database holds).
 */
export function planLimits(plan: Plan): PlanLimits {
  const base = planDefaults(plan);
  const env = deploymentOverrides();
  return {
    ...base,
    cascadeTimeoutMs: env.CELLFLOW_CASCADE_TIMEOUT_MS ?? base.cascadeTimeoutMs,
    attemptTimeoutMs: env.CELLFLOW_ATTEMPT_TIMEOUT_MS ?? base.attemptTimeoutMs,
    rateLimitPerSecond: env.CELLFLOW_RATE_LIMIT_PER_SECOND ?? base.rateLimitPerSecond,
    llmRequestsPerMinute: env.CELLFLOW_LLM_REQUESTS_PER_MINUTE ?? base.llmRequestsPerMinute,
    llmTokensPerMinute: env.CELLFLOW_LLM_TOKENS_PER_MINUTE ?? base.llmTokensPerMinute,
    rowsPerTable: env.CELLFLOW_ROWS_PER_TABLE ?? base.rowsPerTable,
  };
}

const OVERRIDES = [
  "CELLFLOW_CASCADE_TIMEOUT_MS",
  "CELLFLOW_ATTEMPT_TIMEOUT_MS",
  "CELLFLOW_RATE_LIMIT_PER_SECOND",
  "CELLFLOW_LLM_REQUESTS_PER_MINUTE",
  "CELLFLOW_LLM_TOKENS_PER_MINUTE",
  "CELLFLOW_ROWS_PER_TABLE",
] as const;
let overrides: { key: string; env: ReturnType<typeof readEnv> } | undefined;

/**
 * The environment as validated by readEnv, parsed again only when one of the overrides
 * changed (a test may set one): a carrier asks for its row's limits, and validating the
 * whole environment per row was a measurable share of a worker's CPU.
 */
function deploymentOverrides(): ReturnType<typeof readEnv> {
  const key = OVERRIDES.map((name) => process.env[name] ?? "").join("\u0000");
  if (overrides?.key !== key) overrides = { key, env: readEnv() };
  return overrides.env;
}

function planDefaults(plan: Plan): PlanLimits {
  switch (plan) {
    case "free":
      return {
        window: 20,
        cascadeTimeoutMs: 15 * 60_000,
        attemptTimeoutMs: 5 * 60_000,
        monthlyCredits: 1_000,
        rateLimitPerSecond: 5,
        llmRequestsPerMinute: 60,
        llmTokensPerMinute: 40_000,
        rowsPerTable: 50_000,
      };
    case "pro":
      return {
        window: 50,
        cascadeTimeoutMs: 60 * 60_000,
        attemptTimeoutMs: 15 * 60_000,
        monthlyCredits: 100_000,
        rateLimitPerSecond: 20,
        llmRequestsPerMinute: 500,
        llmTokensPerMinute: 200_000,
        rowsPerTable: 1_000_000,
      };
    case "unlimited":
      return {
        window: 200,
        cascadeTimeoutMs: 6 * 60 * 60_000,
        attemptTimeoutMs: 60 * 60_000,
        monthlyCredits: null,
        rateLimitPerSecond: 100,
        llmRequestsPerMinute: 5_000,
        llmTokensPerMinute: 2_000_000,
        rowsPerTable: null,
      };
    default:
      return assertNever(plan);
  }
}

/**
 * The month's credits are spoken for (charged plus reserved): paid work (enrichments) is
 * not started, auto-run stops firing it.
 */
export function creditsExhausted(plan: Plan, creditsCommitted: number): boolean {
  const cap = planLimits(plan).monthlyCredits;
  return cap !== null && creditsCommitted >= cap;
}

/**
 * Rows per table of every plan, for the insert statement, which reads the workspace's
 * plan itself (store/rows/insert.ts): a plan changed a moment ago counts at once.
 */
export function rowCaps(): Record<Plan, number | null> {
  return Object.fromEntries(PLANS.map((p) => [p, planLimits(p).rowsPerTable])) as Record<
    Plan,
    number | null
  >;
}
