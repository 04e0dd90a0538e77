DROP INDEX "usage_dispatch_idx";--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "max_credits_per_row_milli" bigint;--> statement-breakpoint
ALTER TABLE "tables" ADD COLUMN "max_credits_per_row_milli" bigint;--> statement-breakpoint
CREATE INDEX "dispatches_table_seq_idx" ON "dispatches" USING btree ("table_id","seq");--> statement-breakpoint
CREATE INDEX "usage_dispatch_row_idx" ON "usage" USING btree ("dispatch_id","row_id");