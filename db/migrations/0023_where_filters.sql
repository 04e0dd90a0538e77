CREATE TABLE "stop_rows" (
	"seq" bigint NOT NULL,
	"row_id" text NOT NULL,
	CONSTRAINT "stop_rows_seq_row_id_pk" PRIMARY KEY("seq","row_id")
);
--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "where" jsonb;--> statement-breakpoint
ALTER TABLE "stops" ADD COLUMN "matched" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "stop_rows" ADD CONSTRAINT "stop_rows_seq_stops_seq_fk" FOREIGN KEY ("seq") REFERENCES "public"."stops"("seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- A stored date value as a timestamp, for `where` comparisons on date columns; null for a
-- value that is not a date, so a malformed value never fails the statement filtering it.
-- Dates without an offset are read as UTC, whatever the session's time zone (the SET
-- clause fixes it, which is also what makes the function immutable).
CREATE FUNCTION cellflow_timestamp(p_value text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET timezone = 'UTC' AS $$
BEGIN
  -- Only ISO 8601 text: the cast alone would also take words such as 'now'.
  IF p_value IS NULL OR p_value !~ '^\d{4}-\d{2}-\d{2}' THEN
    RETURN NULL;
  END IF;
  RETURN p_value::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END;
$$;
