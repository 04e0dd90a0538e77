CREATE TABLE "rate_limit_cool_downs" (
	"key" text PRIMARY KEY NOT NULL,
	"until_ms" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "rate_limit_logs" ADD COLUMN "weights" integer[];