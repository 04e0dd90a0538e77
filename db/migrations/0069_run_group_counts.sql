-- custom (before the generated statements): no delta is written or folded while the
-- counters per group come in (migration 0070 makes their trigger, in this transaction:
-- drizzle runs pending migrations in one). Taken first, before the ALTER below locks
-- dispatches, in the order a fold locks them (its delete of deltas, then the runs'
-- keys): a fold of the running version then waits, or is waited for, without a cycle.
LOCK TABLE cell_count_deltas IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE TABLE "run_group_cell_counts" (
	"dispatch_id" text NOT NULL,
	"group_id" text NOT NULL,
	"status" "cell_status" NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "run_group_cell_counts_dispatch_id_group_id_status_pk" PRIMARY KEY("dispatch_id","group_id","status")
);
--> statement-breakpoint
-- custom: the runs already there are not counted per group (some of their deltas were
-- folded before the trigger); every run made from here on is. No row is rewritten.
ALTER TABLE "dispatches" ADD COLUMN "group_counted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatches" ALTER COLUMN "group_counted" SET DEFAULT true;--> statement-breakpoint
ALTER TABLE "run_group_cell_counts" ADD CONSTRAINT "run_group_cell_counts_dispatch_id_dispatches_id_fk" FOREIGN KEY ("dispatch_id") REFERENCES "public"."dispatches"("id") ON DELETE cascade ON UPDATE no action;