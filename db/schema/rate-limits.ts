import { bigint, integer, pgTable, text } from "drizzle-orm/pg-core";

/**
 * The Postgres rate limiter's sliding logs (src/limits/rate/postgres.ts), one row per
 * `<limit>/<windowMs>:<workspaceId>:<providerId>`: the calls' slots (epoch ms, the
 * database's clock) still inside the window or reserved ahead, oldest first. The row's
 * lock serializes the takers that reserve a slot, in every process on the database
 * (cellflow_rate_take); a take that is refused only reads it. A weighted log (an llm
 * model's, keyed `<limit>+<weightLimit>/<windowMs>:<workspaceId>:llm:<model>`) also keeps
 * each entry's weight (its tokens), `weights[i]` for `grants[i]`
 * (cellflow_rate_take_weighted); null on a log of calls only.
 */
export const rateLimitLogs = pgTable("rate_limit_logs", {
  key: text("key").primaryKey(),
  grants: bigint("grants", { mode: "number" })
    .array()
    .notNull()
    .default([] as number[]),
  weights: integer("weights").array(),
});

/**
 * A provider's 429 on a key (`<workspaceId>:llm:<model>`), for every process: no weighted
 * take on it gets a slot before `until_ms` (the database's clock, epoch ms).
 */
export const rateLimitCoolDowns = pgTable("rate_limit_cool_downs", {
  key: text("key").primaryKey(),
  untilMs: bigint("until_ms", { mode: "number" }).notNull(),
});
