import { doublePrecision, index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The Prometheus series of every process of the deployment (src/metrics), flushed by each
 * process every 10 s and summed by `GET /api/metrics`: one row per process and series.
 * A counter's or a histogram's row holds what its process counted since it started,
 * added to by each flush (the flush sends what grew since the last one it committed); a
 * gauge's row holds the process's last reading. `process_id = 'gone'` keeps, per series,
 * the counts of the processes that stopped flushing: their rows are folded into it when
 * they expire, so a deployment's total never goes back (their gauges are dropped).
 */
export const metricSeries = pgTable(
  "metric_series",
  {
    processId: text("process_id").notNull(),
    /** server | worker | trigger (the gone row: gone). */
    processKind: text("process_kind").notNull(),
    /** The metric (a histogram's family name). */
    family: text("family").notNull(),
    /** The exposed name: the family's, or its `_bucket`, `_sum` or `_count` for a histogram. */
    name: text("name").notNull(),
    /** The labels as JSON, keys sorted: the series' identity. */
    labels: text("labels").notNull(),
    /** counter | histogram | gauge: what the fold of an expired process keeps. */
    kind: text("kind").notNull(),
    value: doublePrecision("value").notNull(),
    flushedAt: timestamp("flushed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "metric_series_pkey", columns: [t.processId, t.name, t.labels] }),
    index("metric_series_flushed_idx").on(t.flushedAt),
  ],
);
