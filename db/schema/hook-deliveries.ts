import { index, integer, json, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { hooks } from "./hooks";

/**
 * Signed webhook deliveries already processed, so a replayed request (same body, same
 * `t`) is answered with the first response instead of acting twice. Only deliveries that
 * could still verify matter (their `t` within the tolerance), so old ones are pruned.
 */
export const hookDeliveries = pgTable(
  "hook_deliveries",
  {
    hookId: text("hook_id")
      .notNull()
      .references(() => hooks.id, { onDelete: "cascade" }),
    /** SHA-256 (hex) of the signed text "<t>.<raw body>". */
    signatureDigest: text("signature_digest").notNull(),
    /** Null while the first delivery is still being processed. */
    statusCode: integer("status_code"),
    /** `json`, not `jsonb`: it keeps the text as written, so a replay is byte-identical. */
    response: json("response"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.hookId, t.signatureDigest] }),
    index("hook_deliveries_created_idx").on(t.createdAt),
  ],
);
