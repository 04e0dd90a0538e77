CREATE TYPE "public"."delivery_status" AS ENUM('pending', 'delivered', 'failed');--> statement-breakpoint
CREATE TABLE "destination_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"destination_id" text NOT NULL,
	"row_id" text NOT NULL,
	"seq" integer NOT NULL,
	"body" jsonb NOT NULL,
	"status" "delivery_status" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "destination_marks" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "destination_marks_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"table_id" text NOT NULL,
	"row_id" text NOT NULL,
	"dispatch_id" text
);
--> statement-breakpoint
CREATE TABLE "destinations" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"table_id" text NOT NULL,
	"url" text NOT NULL,
	"name" text,
	"secret_ciphertext" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "destination_deliveries" ADD CONSTRAINT "destination_deliveries_destination_id_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "destinations" ADD CONSTRAINT "destinations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "destinations" ADD CONSTRAINT "destinations_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "destination_deliveries_row_seq_idx" ON "destination_deliveries" USING btree ("destination_id","row_id","seq");--> statement-breakpoint
CREATE INDEX "destination_deliveries_pending_idx" ON "destination_deliveries" USING btree ("destination_id","next_attempt_at") WHERE "destination_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "destination_deliveries_list_idx" ON "destination_deliveries" USING btree ("destination_id","created_at","id");--> statement-breakpoint
CREATE INDEX "destination_deliveries_delivered_idx" ON "destination_deliveries" USING btree ("delivered_at") WHERE "destination_deliveries"."status" = 'delivered';--> statement-breakpoint
CREATE INDEX "destinations_table_idx" ON "destinations" USING btree ("table_id");--> statement-breakpoint
CREATE INDEX "destinations_enabled_idx" ON "destinations" USING btree ("table_id") WHERE "destinations"."enabled";