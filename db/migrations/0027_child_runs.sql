CREATE TYPE "public"."child_run_status" AS ENUM('running', 'completed', 'error', 'cancelled');--> statement-breakpoint
CREATE TABLE "child_runs" (
	"id" text NOT NULL,
	"attempt" integer NOT NULL,
	"execution_id" text NOT NULL,
	"parent_id" text NOT NULL,
	"row_id" text NOT NULL,
	"group_id" text NOT NULL,
	"block_id" text NOT NULL,
	"item_index" integer,
	"workflow_id" text NOT NULL,
	"status" "child_run_status" NOT NULL,
	"output" jsonb,
	"error" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "child_runs_id_attempt_pk" PRIMARY KEY("id","attempt")
);
--> statement-breakpoint
ALTER TABLE "child_runs" ADD CONSTRAINT "child_runs_row_id_rows_id_fk" FOREIGN KEY ("row_id") REFERENCES "public"."rows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "child_runs_execution_idx" ON "child_runs" USING btree ("execution_id","attempt");