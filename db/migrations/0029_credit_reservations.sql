CREATE TYPE "public"."credit_state" AS ENUM('reserved', 'charged');--> statement-breakpoint
ALTER TABLE "cell_attempts" ADD COLUMN "details" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "cells" ADD COLUMN "credits_held" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "committed_milli" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "milli" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "state" "credit_state" DEFAULT 'charged' NOT NULL;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "table_id" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "row_id" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "group_id" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "cell_execution_id" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "attempt" integer;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "dispatch_id" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "charged_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "used_milli" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "reserved_milli" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "usage_reserved_attempt_idx" ON "usage" USING btree ("cell_execution_id","attempt") WHERE "usage"."state" = 'reserved';--> statement-breakpoint
CREATE INDEX "usage_dispatch_idx" ON "usage" USING btree ("dispatch_id") WHERE "usage"."dispatch_id" is not null;--> statement-breakpoint
-- custom: amounts in milli-credits; entries from before reservations were all charges.
UPDATE "usage" SET "milli" = "credits"::bigint * 1000, "charged_at" = "created_at";--> statement-breakpoint
UPDATE "workspaces" SET "used_milli" = "credits_used"::bigint * 1000;--> statement-breakpoint
UPDATE "dispatches" SET "committed_milli" = "credits_used"::bigint * 1000 WHERE "max_credits" IS NOT NULL;
