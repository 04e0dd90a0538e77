import { bigint, pgTable, text } from "drizzle-orm/pg-core";

/**
 * The Postgres rate limiter's sliding logs (src/limits/rate/postgres.ts), one row per
 * `<limit>/<windowMs>:<workspaceId>:<providerId>`: the calls' slots (epoch ms, the
 * database's clock) still inside the window or reserved ahead, oldest first. The row's
 * lock serializes the takers that reserve a slot, in every process on the database
 * (cellflow_rate_take); a take that is refused only reads it.
 */
export const rateLimitLogs = pgTable("rate_limit_logs", {
  key: text("key").primaryKey(),
  grants: bigint("grants", { mode: "number" })
    .array()
    .notNull()
    .default([] as number[]),
});
