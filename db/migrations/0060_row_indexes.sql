CREATE TABLE "row_indexes" (
	"index_name" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"column_id" text NOT NULL,
	"column_type" text NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"ready_at" timestamp with time zone,
	CONSTRAINT "row_indexes_kind_check" CHECK ("row_indexes"."kind" in ('sort_asc', 'sort_desc', 'trgm')),
	CONSTRAINT "row_indexes_status_check" CHECK ("row_indexes"."status" in ('pending', 'building', 'ready', 'failed'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "row_indexes_key_idx" ON "row_indexes" USING btree ("table_id","column_id","column_type","kind");--> statement-breakpoint
CREATE INDEX "row_indexes_status_idx" ON "row_indexes" USING btree ("status");