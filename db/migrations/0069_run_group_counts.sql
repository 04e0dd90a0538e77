CREATE TABLE "run_group_cell_counts" (
	"dispatch_id" text NOT NULL,
	"group_id" text NOT NULL,
	"status" "cell_status" NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "run_group_cell_counts_dispatch_id_group_id_status_pk" PRIMARY KEY("dispatch_id","group_id","status")
);
--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "group_counted" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "run_group_cell_counts" ADD CONSTRAINT "run_group_cell_counts_dispatch_id_dispatches_id_fk" FOREIGN KEY ("dispatch_id") REFERENCES "public"."dispatches"("id") ON DELETE cascade ON UPDATE no action;