CREATE TABLE "metric_series" (
	"process_id" text NOT NULL,
	"process_kind" text NOT NULL,
	"family" text NOT NULL,
	"name" text NOT NULL,
	"labels" text NOT NULL,
	"kind" text NOT NULL,
	"value" double precision NOT NULL,
	"flushed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "metric_series_pkey" PRIMARY KEY("process_id","name","labels")
);
--> statement-breakpoint
CREATE INDEX "metric_series_flushed_idx" ON "metric_series" USING btree ("flushed_at");