/**
 * The SQLSTATEs (and socket errors) the engine tells apart, in one table. Everything that
 * asks "was this the database going away?" asks here.
 */

/** Classes and codes that mean the session or the server went away, not that a statement was wrong. */
const CONNECTION_LOSS_SQLSTATES: Record<string, string> = {
  "08000": "connection exception",
  "08003": "connection does not exist",
  "08006": "connection failure",
  "08001": "unable to establish connection",
  "08004": "server rejected the connection",
  "57P01": "admin shutdown (also a crashed postmaster's backends)",
  "57P02": "crash shutdown",
  "57P03": "cannot connect now (starting up, recovering)",
};

const CONNECTION_LOSS_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

/** node-postgres says these in words, without a code. */
const CONNECTION_LOSS_MESSAGES = [
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
];

function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}

/** True when `err` (or an error it wraps, as drizzle's query errors do) is a lost database. */
export function isConnectionLoss(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== "object" || err === null) return false;
  const code = codeOf(err);
  if (code && (code in CONNECTION_LOSS_SQLSTATES || CONNECTION_LOSS_ERRNOS.has(code))) return true;
  const message = err instanceof Error ? err.message : "";
  if (CONNECTION_LOSS_MESSAGES.some((m) => message.includes(m))) return true;
  return "cause" in err && isConnectionLoss(err.cause, depth + 1);
}

/** A deadlock or serialization failure: the transaction was rolled back whole and may run again. */
const RETRYABLE_SQLSTATES: Record<string, string> = {
  "40001": "serialization failure",
  "40P01": "deadlock detected",
};

export function isRetryableConflict(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== "object" || err === null) return false;
  const code = codeOf(err);
  if (code && code in RETRYABLE_SQLSTATES) return true;
  return "cause" in err && isRetryableConflict(err.cause, depth + 1);
}

/**
 * Runs a transaction (or a single statement) again when Postgres rolled it back for a
 * deadlock or a serialization failure, with a short jittered backoff. `run` must be a
 * whole transaction: a retry inside one would run on an aborted transaction.
 */
export async function retryOnConflict<T>(run: () => Promise<T>, attempts = 6): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (err) {
      if (i >= attempts || !isRetryableConflict(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * i));
    }
  }
}

/**
 * A unique index refused a second row (23505): the row it guards is already there, so
 * the work that row records was done (or is being committed) by someone else. Only the
 * named constraint counts: any other duplicate is still a bug to surface.
 */
const UNIQUE_VIOLATION = "23505";

export function isUniqueViolation(err: unknown, constraint: string, depth = 0): boolean {
  if (depth > 5 || typeof err !== "object" || err === null) return false;
  if (
    codeOf(err) === UNIQUE_VIOLATION &&
    "constraint" in err &&
    (err as { constraint?: unknown }).constraint === constraint
  )
    return true;
  return "cause" in err && isUniqueViolation(err.cause, constraint, depth + 1);
}
