CREATE TABLE "events_pruned" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"through_seq" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "events_pruned_one_row" CHECK ("events_pruned"."one")
);
--> statement-breakpoint
-- custom: what was gone before the mark was kept: every position below the oldest one
-- still stored, or, with none stored, every position handed out (what `min(seq)` said).
INSERT INTO "events_pruned" ("one", "through_seq")
SELECT true, coalesce((SELECT min(seq) - 1 FROM events WHERE seq IS NOT NULL),
                      (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM event_seq));
