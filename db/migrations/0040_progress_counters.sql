ALTER TYPE "public"."event_kind" ADD VALUE 'progress';--> statement-breakpoint
CREATE TABLE "cell_count_deltas" (
	"table_id" text NOT NULL,
	"group_id" text,
	"dispatch_id" text,
	"status" "cell_status",
	"outcome" "cell_outcome",
	"n" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cell_counts" (
	"table_id" text NOT NULL,
	"group_id" text NOT NULL,
	"status" "cell_status" NOT NULL,
	"outcome" "cell_outcome",
	"n" bigint NOT NULL,
	CONSTRAINT "cell_counts_key" UNIQUE NULLS NOT DISTINCT("table_id","group_id","status","outcome")
);
--> statement-breakpoint
CREATE TABLE "run_cell_counts" (
	"dispatch_id" text NOT NULL,
	"status" "cell_status" NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "run_cell_counts_dispatch_id_status_pk" PRIMARY KEY("dispatch_id","status")
);
--> statement-breakpoint
CREATE TABLE "table_counts" (
	"table_id" text PRIMARY KEY NOT NULL,
	"rows" bigint DEFAULT 0 NOT NULL,
	"progress_pending" boolean DEFAULT false NOT NULL,
	"progress_sent_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "cell_counts" ADD CONSTRAINT "cell_counts_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_cell_counts" ADD CONSTRAINT "run_cell_counts_dispatch_id_dispatches_id_fk" FOREIGN KEY ("dispatch_id") REFERENCES "public"."dispatches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_counts" ADD CONSTRAINT "table_counts_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cell_count_deltas_table_idx" ON "cell_count_deltas" USING btree ("table_id");