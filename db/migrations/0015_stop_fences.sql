CREATE TABLE "stops" (
	"seq" bigint PRIMARY KEY DEFAULT nextval('cellflow_execution_seq') NOT NULL,
	"table_id" text NOT NULL,
	"row_ids" text[],
	"group_ids" text[],
	"dispatch_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "excluded" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "depends_on" jsonb;--> statement-breakpoint
ALTER TABLE "stops" ADD CONSTRAINT "stops_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "stops_table_seq_idx" ON "stops" USING btree ("table_id","seq");