CREATE TYPE "public"."halt_reason" AS ENUM('monthly_credits', 'run_credit_cap');--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "max_credits" integer;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "credits_used" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "halt_reason" "halt_reason";--> statement-breakpoint
-- Until now a halt could only be the month's credits running out.
UPDATE "dispatches" SET "halt_reason" = 'monthly_credits' WHERE "status" = 'halted';
