CREATE TABLE "run_cancels" (
	"run_id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"due_at" timestamp with time zone DEFAULT now() NOT NULL,
	"leased_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text
);
--> statement-breakpoint
CREATE INDEX "run_cancels_due_idx" ON "run_cancels" USING btree ("due_at");