CREATE TABLE "pending_carriers" (
	"row_id" text PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"dispatch_id" text,
	"run_key" text NOT NULL,
	"enqueued_at" timestamp with time zone DEFAULT now() NOT NULL
);
