CREATE TABLE "stop_ranges" (
	"seq" bigint NOT NULL,
	"lo" bigint NOT NULL,
	"hi" bigint NOT NULL,
	CONSTRAINT "stop_ranges_seq_lo_pk" PRIMARY KEY("seq","lo")
);
--> statement-breakpoint
ALTER TABLE "stop_ranges" ADD CONSTRAINT "stop_ranges_seq_stops_seq_fk" FOREIGN KEY ("seq") REFERENCES "public"."stops"("seq") ON DELETE cascade ON UPDATE no action;