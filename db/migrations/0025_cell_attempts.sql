CREATE TABLE "cell_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"table_id" text NOT NULL,
	"row_id" text NOT NULL,
	"group_id" text NOT NULL,
	"execution_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"status" "cell_status" NOT NULL,
	"outcome" "cell_outcome",
	"error" text,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"outputs" jsonb,
	"block_errors" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"resumed_from" text
);
--> statement-breakpoint
ALTER TABLE "cells" ADD COLUMN "resumed_from" text;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "resume" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "cell_attempts" ADD CONSTRAINT "cell_attempts_row_id_rows_id_fk" FOREIGN KEY ("row_id") REFERENCES "public"."rows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cell_attempts_cell_idx" ON "cell_attempts" USING btree ("row_id","group_id","id");--> statement-breakpoint
-- A group's output values in a row (the columns its outputs write; null for an absent
-- one), from a table schema. Pure: a statement passes its own snapshot's schema and data.
CREATE OR REPLACE FUNCTION cellflow_group_outputs(p_schema jsonb, p_data jsonb, p_group text)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(o->>'columnId', coalesce(p_data -> (o->>'columnId'), 'null'::jsonb)), '{}'::jsonb)
    FROM jsonb_array_elements(coalesce(p_schema->'groups', '[]'::jsonb)) g,
         jsonb_array_elements(coalesce(g->'outputs', '[]'::jsonb)) o
   WHERE g->>'id' = p_group
$$;
--> statement-breakpoint
-- Attempt history: the attempt a cell row moves on from becomes a cell_attempts record.
-- A trigger, not a CTE in each writer: it sees the exact row version replaced (a stamp's
-- own read of the cell can predate a concurrent finish), catches every writer, and its
-- WHEN clause keeps it off the hot path: a new cell's stamp is an INSERT (no UPDATE
-- trigger fires) and claims, progress and terminal writes keep the execution id, so the
-- clause is false for them and the function is never called.
-- An ended attempt keeps its status; an in-flight one a new run took over is recorded as
-- cancelled; one a re-drive handed back (running -> queued, same execution) as an error.
CREATE OR REPLACE FUNCTION cellflow_record_attempt() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ended boolean := OLD.status IN ('completed', 'error', 'cancelled');
  interrupted boolean := OLD.status = 'running' AND NEW.status = 'queued'
                         AND OLD.execution_id = NEW.execution_id;
BEGIN
  INSERT INTO cell_attempts (table_id, row_id, group_id, execution_id, attempt, status, outcome, error,
                             started_at, ended_at, outputs, block_errors, resumed_from)
  VALUES (OLD.table_id, OLD.row_id, OLD.group_id, OLD.execution_id, OLD.attempt,
          CASE WHEN ended THEN OLD.status WHEN interrupted THEN 'error' ELSE 'cancelled' END,
          CASE WHEN ended THEN OLD.outcome END,
          CASE WHEN ended THEN OLD.error
               WHEN interrupted THEN 'Interrupted: the worker running it stopped, and the cell went back to the queue'
               ELSE 'Replaced by a new run before it finished' END,
          OLD.started_at,
          CASE WHEN ended THEN coalesce(OLD.finished_at, now()) ELSE now() END,
          CASE WHEN OLD.status = 'completed' THEN
            cellflow_group_outputs((SELECT schema FROM tables WHERE id = OLD.table_id),
                                   (SELECT data FROM rows WHERE id = OLD.row_id), OLD.group_id) END,
          OLD.block_errors, OLD.resumed_from);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cells_record_attempt AFTER UPDATE ON cells FOR EACH ROW
WHEN ((OLD.execution_id <> NEW.execution_id
       AND (OLD.status IN ('completed', 'error', 'cancelled') OR OLD.started_at IS NOT NULL))
      OR (OLD.status = 'running' AND NEW.status = 'queued'))
EXECUTE FUNCTION cellflow_record_attempt();
--> statement-breakpoint
-- A cell keeps its last 20 records (ATTEMPTS_KEPT in src/store/cells/attempts.ts).
CREATE OR REPLACE FUNCTION cellflow_prune_attempts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM cell_attempts
   WHERE row_id = NEW.row_id AND group_id = NEW.group_id
     AND id <= (SELECT id FROM cell_attempts WHERE row_id = NEW.row_id AND group_id = NEW.group_id
                 ORDER BY id DESC OFFSET 20 LIMIT 1);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cell_attempts_prune AFTER INSERT ON cell_attempts FOR EACH ROW
EXECUTE FUNCTION cellflow_prune_attempts();
