CREATE TYPE "public"."cell_outcome" AS ENUM('ok', 'skipped', 'not_found');--> statement-breakpoint
CREATE TYPE "public"."cell_status" AS ENUM('queued', 'running', 'paused', 'completed', 'error', 'cancelled');--> statement-breakpoint
CREATE TYPE "public"."dispatch_status" AS ENUM('active', 'completed', 'cancelled', 'halted');--> statement-breakpoint
CREATE TYPE "public"."event_kind" AS ENUM('cell', 'dispatch', 'limit', 'schema', 'rows');--> statement-breakpoint
CREATE TYPE "public"."hook_action" AS ENUM('insert_rows', 'run');--> statement-breakpoint
CREATE TYPE "public"."plan" AS ENUM('free', 'pro', 'unlimited');--> statement-breakpoint
CREATE TYPE "public"."run_mode" AS ENUM('all', 'incomplete', 'new');--> statement-breakpoint
CREATE TABLE "cells" (
	"table_id" text NOT NULL,
	"row_id" text NOT NULL,
	"group_id" text NOT NULL,
	"status" "cell_status" NOT NULL,
	"execution_id" text NOT NULL,
	"dispatch_id" text,
	"attempt" integer DEFAULT 0 NOT NULL,
	"outcome" "cell_outcome",
	"error" text,
	"running_block_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"block_errors" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"run_id" text,
	"queued_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cells_row_id_group_id_pk" PRIMARY KEY("row_id","group_id")
);
--> statement-breakpoint
CREATE TABLE "dispatches" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"group_ids" text[] NOT NULL,
	"mode" "run_mode" NOT NULL,
	"row_ids" text[],
	"row_limit" integer,
	"window" integer NOT NULL,
	"cursor" bigint DEFAULT -1 NOT NULL,
	"in_flight" integer DEFAULT 0 NOT NULL,
	"stamped" integer DEFAULT 0 NOT NULL,
	"status" "dispatch_status" DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"kind" "event_kind" NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "executions" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"row_id" text NOT NULL,
	"group_id" text NOT NULL,
	"workflow_id" text,
	"workflow_version" integer,
	"checkpoints" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"pause_token" text,
	"resume_data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hooks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"table_id" text NOT NULL,
	"action" "hook_action" NOT NULL,
	"secret_ciphertext" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "rows" (
	"id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"position" bigint NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tables" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"schema" jsonb NOT NULL,
	"schema_version" integer DEFAULT 1 NOT NULL,
	"next_position" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"execution_id" text NOT NULL,
	"source" text NOT NULL,
	"credits" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_versions" (
	"workflow_id" text NOT NULL,
	"version" integer NOT NULL,
	"definition" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_versions_workflow_id_version_pk" PRIMARY KEY("workflow_id","version")
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"definition" jsonb NOT NULL,
	"deployed_version" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" "plan" DEFAULT 'free' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cells" ADD CONSTRAINT "cells_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cells" ADD CONSTRAINT "cells_row_id_rows_id_fk" FOREIGN KEY ("row_id") REFERENCES "public"."rows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatches" ADD CONSTRAINT "dispatches_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_row_id_rows_id_fk" FOREIGN KEY ("row_id") REFERENCES "public"."rows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hooks" ADD CONSTRAINT "hooks_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hooks" ADD CONSTRAINT "hooks_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rows" ADD CONSTRAINT "rows_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tables" ADD CONSTRAINT "tables_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage" ADD CONSTRAINT "usage_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cells_execution_idx" ON "cells" USING btree ("execution_id");--> statement-breakpoint
CREATE INDEX "cells_table_status_idx" ON "cells" USING btree ("table_id","status");--> statement-breakpoint
CREATE INDEX "cells_dispatch_status_idx" ON "cells" USING btree ("dispatch_id","status") WHERE "cells"."dispatch_id" is not null;--> statement-breakpoint
CREATE INDEX "dispatches_table_status_idx" ON "dispatches" USING btree ("table_id","status","created_at");--> statement-breakpoint
CREATE INDEX "dispatches_active_idx" ON "dispatches" USING btree ("status") WHERE "dispatches"."status" = 'active';--> statement-breakpoint
CREATE INDEX "events_table_id_idx" ON "events" USING btree ("table_id","id");--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "executions_row_idx" ON "executions" USING btree ("row_id","group_id");--> statement-breakpoint
CREATE INDEX "hooks_table_idx" ON "hooks" USING btree ("table_id");--> statement-breakpoint
CREATE UNIQUE INDEX "rows_table_position_idx" ON "rows" USING btree ("table_id","position");--> statement-breakpoint
CREATE INDEX "tables_workspace_idx" ON "tables" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "usage_execution_source_idx" ON "usage" USING btree ("execution_id","source");--> statement-breakpoint
CREATE INDEX "usage_workspace_created_idx" ON "usage" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "workflows_workspace_idx" ON "workflows" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "api_keys_workspace_idx" ON "api_keys" USING btree ("workspace_id");