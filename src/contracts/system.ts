import { z } from "zod";
import { RUN_MODES } from "@/domain/statuses";

const count = z.number().int().nonnegative();
const seconds = z.number().nonnegative();

/**
 * An active run of the workspace: its cells by status off its counters (`total` all of
 * them so far, `done` those that ended: completed, error or cancelled), how fast they end
 * (`cellsPerSecond`: over the last 30 s this server saw, else since the run started), and
 * when the cells queued or running would be done at that pace (`etaSeconds`; null while
 * nothing ends). A run still `stamping` has more cells to come: its ETA is a lower bound.
 */
export const SystemRun = z.object({
  id: z.string(),
  tableId: z.string(),
  tableName: z.string(),
  groupIds: z.array(z.string()),
  mode: z.enum(RUN_MODES),
  createdAt: z.string(),
  stamping: z.boolean(),
  total: count,
  done: count,
  queued: count,
  running: count,
  paused: count,
  errors: count,
  cellsPerSecond: seconds,
  etaSeconds: seconds.nullable(),
});
export type SystemRun = z.infer<typeof SystemRun>;

/**
 * Whose figures a deployment-wide section holds: `deployment` (every workspace's; shown
 * only where the key's workspace is the deployment's only one), or `withheld` (other
 * workspaces exist, and their volumes are theirs: the section is empty, and the figures
 * are `GET /api/metrics`'s, behind its token).
 */
export const DeploymentScope = z.enum(["deployment", "withheld"]);
export type DeploymentScope = z.infer<typeof DeploymentScope>;

/**
 * Stamp → running over the whole deployment (every workspace): the claims' histogram that
 * `GET /api/metrics` exposes, summed over the processes since their series began. The
 * quantiles are read off its buckets as Prometheus' `histogram_quantile` does (null: no
 * claim yet, or withheld).
 */
export const StampToRunning = z.object({
  scope: DeploymentScope,
  claims: count,
  p50Seconds: seconds.nullable(),
  p99Seconds: seconds.nullable(),
});
export type StampToRunning = z.infer<typeof StampToRunning>;

/**
 * One provider's calls over the whole deployment, by outcome (`refused`: it answered 429
 * or 503 with `Retry-After`; `cached`: answered from the result cache, no call), and the
 * calls that waited at the rate limiter: how many, their total and 99th percentile wait.
 */
export const ProviderLoad = z.object({
  provider: z.string(),
  calls: count,
  found: count,
  empty: count,
  error: count,
  refused: count,
  cached: count,
  waits: count,
  waitSeconds: seconds,
  waitP99Seconds: seconds.nullable(),
});
export type ProviderLoad = z.infer<typeof ProviderLoad>;

/** A cell in `error`, with where the app shows it (`link`: its table, the cell's details open). */
export const SystemCellError = z.object({
  tableId: z.string(),
  tableName: z.string(),
  rowId: z.string(),
  groupId: z.string(),
  groupName: z.string().nullable(),
  error: z.string().nullable(),
  finishedAt: z.string().nullable(),
  link: z.string(),
});
export type SystemCellError = z.infer<typeof SystemCellError>;

/**
 * `GET /api/system`: what the app's System page shows, for the key's workspace, read at
 * `at`. `queueDepth` and `carriersRunning` are its cells queued and running now (a carrier
 * runs one cell of its row at a time), off the progress counters. `stampToRunning` and
 * `providers` are deployment-wide (the Prometheus series, which have no workspace label):
 * their `scope` says so, and they are withheld where other workspaces exist. `credits` is this month's, as `GET /api/usage` has them. `errors`:
 * the workspace's 20 newest cells in `error`, newest first.
 */
export const SystemView = z.object({
  at: z.string(),
  runs: z.array(SystemRun),
  queueDepth: count,
  carriersRunning: count,
  stampToRunning: StampToRunning,
  providers: z.object({ scope: DeploymentScope, list: z.array(ProviderLoad) }),
  credits: z.object({
    month: z.string(),
    used: z.number(),
    reserved: z.number(),
    limit: z.number().nullable(),
    bySource: z.array(z.object({ source: z.string(), credits: z.number() })),
  }),
  errors: z.array(SystemCellError),
});
export type SystemView = z.infer<typeof SystemView>;
