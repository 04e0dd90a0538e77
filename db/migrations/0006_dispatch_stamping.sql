ALTER TABLE "dispatches" ADD COLUMN "stamping" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "stamp_after" bigint DEFAULT -1 NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "stamped_rows" integer DEFAULT 0 NOT NULL;