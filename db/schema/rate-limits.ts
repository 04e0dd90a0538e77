import { bigint, pgTable, text } from "drizzle-orm/pg-core";

/**
 * The Postgres rate limiter's sliding logs (src/limits/rate/postgres.ts), one row per
 * `<limit>/<windowMs>:<workspaceId>:<providerId>`: the grant times (epoch ms, the
 * database's clock) still inside the window, oldest first. The row's lock serializes
 * the takers of one key across every process on the database (cellflow_rate_take).
 */
export const rateLimitLogs = pgTable("rate_limit_logs", {
  key: text("key").primaryKey(),
  grants: bigint("grants", { mode: "number" })
    .array()
    .notNull()
    .default([] as number[]),
});
