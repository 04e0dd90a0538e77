CREATE TABLE "run_keys" (
	"table_id" text NOT NULL,
	"key" text NOT NULL,
	"request_digest" text NOT NULL,
	"dispatch_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "run_keys_pkey" PRIMARY KEY("table_id","key")
);
--> statement-breakpoint
ALTER TABLE "run_keys" ADD CONSTRAINT "run_keys_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_keys" ADD CONSTRAINT "run_keys_dispatch_id_dispatches_id_fk" FOREIGN KEY ("dispatch_id") REFERENCES "public"."dispatches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "run_keys_created_idx" ON "run_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "run_keys_dispatch_idx" ON "run_keys" USING btree ("dispatch_id");