ALTER TABLE "run_cancels" ADD COLUMN "row_id" text;--> statement-breakpoint
ALTER TABLE "run_cancels" ADD COLUMN "cascade_groups" text[] DEFAULT '{}'::text[] NOT NULL;