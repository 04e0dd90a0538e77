/**
 * Which environment variables the trigger.dev tasks need, in one place. Guarantees: every
 * variable of the Env schema is classified exactly once — pushed to the tasks
 * (`TASK_ENV`), provided by trigger.dev itself (`PLATFORM_ENV`), or not for the tasks
 * (`NOT_FOR_TASKS`, with the reason) — a unit test holds that, so a new variable cannot
 * be forgotten; and `taskEnvVars` returns exactly the task variables set (non-empty) in
 * the deploying shell, which trigger.config.ts's `syncEnvVars` pushes on `deploy`.
 * Tasks see only their trigger.dev environment: nothing reaches them from the web app's.
 * No runtime imports: trigger.config.ts loads this file in the CLI.
 */
import type { Env } from "./env";

type EnvName = keyof Env;

/** Read by the engine inside the tasks; `secret` ones are hidden in the dashboard. */
export const TASK_ENV = {
  DATABASE_URL: { secret: true },
  DATABASE_URL_UNPOOLED: { secret: true },
  DATABASE_DRIVER: { secret: false },
  DATABASE_POOL_MAX: { secret: false },
  CELLFLOW_SECRET_KEY: { secret: true },
  CELLFLOW_LLM_BASE_URL: { secret: false },
  CELLFLOW_ANTHROPIC_BASE_URL: { secret: false },
  CELLFLOW_LLM_PRICES: { secret: false },
  CELLFLOW_ALLOW_PRIVATE_NETWORK: { secret: false },
  CELLFLOW_CASCADE_TIMEOUT_MS: { secret: false },
  CELLFLOW_ATTEMPT_TIMEOUT_MS: { secret: false },
  CELLFLOW_RATE_LIMIT_PER_SECOND: { secret: false },
  CELLFLOW_LLM_REQUESTS_PER_MINUTE: { secret: false },
  CELLFLOW_LLM_TOKENS_PER_MINUTE: { secret: false },
  EVENTS_RETENTION_HOURS: { secret: false },
  CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS: { secret: false },
  RATE_LIMITER: { secret: false },
  UPSTASH_REDIS_REST_URL: { secret: false },
  UPSTASH_REDIS_REST_TOKEN: { secret: true },
  REDIS_URL: { secret: true },
  LOG_LEVEL: { secret: false },
  // The drain-run-cancels schedule drains the Stop's outbox inside trigger.dev too.
  CELLFLOW_CANCEL_RATE_PER_SECOND: { secret: false },
  CELLFLOW_CANCEL_CONCURRENCY: { secret: false },
  // The drain-destinations schedule sends the destinations' outbox inside trigger.dev.
  CELLFLOW_DESTINATION_RETRY_BASE_MS: { secret: false },
  // Each run's process flushes its metrics into Postgres this often (and at the run's end).
  CELLFLOW_METRICS_FLUSH_MS: { secret: false },
} as const satisfies Partial<Record<EnvName, { secret: boolean }>>;

/**
 * Read inside the tasks but set by trigger.dev in every run; `syncEnvVars` drops any
 * TRIGGER_* name, so these cannot be pushed anyway.
 */
export const PLATFORM_ENV = [
  "TRIGGER_SECRET_KEY",
  "TRIGGER_API_URL",
] as const satisfies readonly EnvName[];

/** Never read inside a task: the web server, the local worker, or the deploy itself. */
export const NOT_FOR_TASKS = {
  PORT: "the web server's port",
  HOST: "the web server's interface",
  CELLFLOW_API_KEY: "the web API's key",
  CELLFLOW_ADMIN_TOKEN: "the web API's admin token",
  CELLFLOW_METRICS_TOKEN:
    "the web API's GET /api/metrics token; the tasks flush their series into Postgres, where the web server reads them",
  CELLFLOW_ROWS_PER_TABLE: "read by the web API's row inserts; tasks insert no rows",
  CELLFLOW_IMPORT_MAX_ROWS: "read by the web API's CSV import; tasks import nothing",
  CELLFLOW_ROW_INDEX_MIN_ROWS:
    "read by the web API's row reads when they record row indexes; the tasks only build what was recorded",
  CELLFLOW_IMPORT_MAX_BYTES: "read by the web API's CSV import; tasks import nothing",
  CELLFLOW_DATA_DIR: "the embedded Postgres of a single machine",
  CELLFLOW_PG_PORT: "the embedded Postgres of a single machine",
  NEON_WS_PROXY: "a local WebSocket proxy for tests; a deployment reaches Neon directly",
  TASK_BACKEND: "the web app's choice of backend; the tasks are the trigger.dev backend",
  WORKER_CONCURRENCY: "the local worker; trigger.dev's concurrency limits apply instead",
  CELLFLOW_TEST_RUN_TIMEOUT_MS: "the web API's test runs of workflows, which run in the web app",
  CELLFLOW_REDRIVE_EVERY_MS: "the local worker; the redrive-orphans schedule runs instead",
  LOG_FORMAT: "task logs go to the run's log view through trigger.dev's logger",
  TRIGGER_PROJECT_REF: "read by trigger.config.ts when deploying",
  OTEL_EXPORTER_OTLP_ENDPOINT:
    "trigger.dev sets its own in every run (the platform's collector); the tasks' spans join its run traces",
  OTEL_TRACES_SAMPLER:
    "the tasks' spans are children of trigger.dev's run spans, sampled as the platform samples them",
  OTEL_TRACES_SAMPLER_ARG: "as OTEL_TRACES_SAMPLER: the platform's sampling applies in the tasks",
  OTEL_SERVICE_NAME: "the tasks' spans carry trigger.dev's service name",
} as const satisfies Partial<Record<EnvName, string>>;

export type TaskEnvName = keyof typeof TASK_ENV;

export const TASK_ENV_NAMES = Object.keys(TASK_ENV) as TaskEnvName[];

export interface TaskEnvVar {
  name: TaskEnvName;
  value: string;
  isSecret: boolean;
}

/** The task variables set in `source` (an empty value counts as unset, as in readEnv). */
export function taskEnvVars(
  source: Record<string, string | undefined> = process.env,
): TaskEnvVar[] {
  const set: TaskEnvVar[] = [];
  for (const name of TASK_ENV_NAMES) {
    const value = source[name];
    if (value !== undefined && value !== "") {
      set.push({ name, value, isSecret: TASK_ENV[name].secret });
    }
  }
  return set;
}
