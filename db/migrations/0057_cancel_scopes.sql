CREATE TABLE "cancel_scopes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"table_id" text NOT NULL,
	"dispatch_id" text NOT NULL,
	"group_ids" text[],
	"row_ids" text[],
	"stop_seq" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cancel_scopes" ADD CONSTRAINT "cancel_scopes_table_id_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cancel_scopes" ADD CONSTRAINT "cancel_scopes_dispatch_id_dispatches_id_fk" FOREIGN KEY ("dispatch_id") REFERENCES "public"."dispatches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cancel_scopes_dispatch_idx" ON "cancel_scopes" USING btree ("dispatch_id");--> statement-breakpoint
CREATE INDEX "cancel_scopes_table_idx" ON "cancel_scopes" USING btree ("table_id");--> statement-breakpoint
CREATE INDEX "cells_unrun_active_idx" ON "cells" USING btree ("table_id") WHERE "cells"."dispatch_id" is null and "cells"."status" in ('queued', 'running', 'paused');