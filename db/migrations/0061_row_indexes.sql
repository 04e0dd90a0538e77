CREATE TYPE "public"."row_index_kind" AS ENUM('sort_asc', 'sort_desc', 'trgm');--> statement-breakpoint
CREATE TYPE "public"."row_index_status" AS ENUM('pending', 'building', 'ready', 'failed');--> statement-breakpoint
CREATE TABLE "row_indexes" (
	"index_name" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"column_id" text NOT NULL,
	"column_type" text NOT NULL,
	"kind" "row_index_kind" NOT NULL,
	"status" "row_index_status" DEFAULT 'pending' NOT NULL,
	"error" text,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"ready_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "row_indexes_key_idx" ON "row_indexes" USING btree ("table_id","column_id","column_type","kind");--> statement-breakpoint
CREATE INDEX "row_indexes_status_idx" ON "row_indexes" USING btree ("status");