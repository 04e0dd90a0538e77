CREATE TABLE "events_pruned" (
	"table_id" text PRIMARY KEY NOT NULL,
	"through_seq" bigint NOT NULL
);
--> statement-breakpoint
-- custom: what was gone before the marks were kept, as `min(seq)` over every event said it:
-- every position below the oldest one still stored or, with none stored, every position
-- handed out. Each table starts there; a table created later has no mark (nothing pruned).
INSERT INTO "events_pruned" ("table_id", "through_seq")
SELECT t.id, g.through
  FROM tables t
 CROSS JOIN (SELECT coalesce((SELECT min(seq) - 1 FROM events WHERE seq IS NOT NULL),
                             (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM event_seq)) AS through) g;
