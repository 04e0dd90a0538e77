DROP INDEX "usage_workspace_created_idx";--> statement-breakpoint
CREATE INDEX "usage_workspace_charged_idx" ON "usage" USING btree ("workspace_id","charged_at");--> statement-breakpoint
ALTER TABLE "dispatches" DROP COLUMN "credits_used";--> statement-breakpoint
ALTER TABLE "usage" DROP COLUMN "credits";--> statement-breakpoint
ALTER TABLE "workspaces" DROP COLUMN "credits_used";--> statement-breakpoint
-- custom: a reservation lives only while the attempt that made it holds its cell. When a
-- cell that reserved credits moves on from that attempt (completed, error, paused,
-- cancelled by a Stop, requeued by the re-drive or a shutdown, replaced by a new run, or
-- deleted), whatever the attempt reserved and its recording write did not settle (the
-- statement's own settle ran before this AFTER trigger) is released. A trigger, not a CTE
-- in each writer: no transition that ends an attempt can forget it. The WHEN clause keeps
-- it off every cell that reserved nothing (the claim clears credits_held).
-- The capped run's row is taken before the workspace's, the order a reservation takes them.
-- One release for both callers: this trigger (everything the attempt still holds) and an
-- attempt giving back one charge key early (a miss, a failure: store/usage/release.ts).
CREATE OR REPLACE FUNCTION cellflow_release_reserved(p_cell_execution text, p_attempt int,
                                                     p_charge text DEFAULT NULL, p_source text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  runs text[];
  spaces text[];
  amounts bigint[];
BEGIN
  -- The entries first, and the counters only from what this very DELETE released: two
  -- releases of one attempt (the attempt's own and the trigger of the Stop taking its cell)
  -- cannot both count an entry, nor can a release count one a settle charged meanwhile.
  WITH rel AS (
    DELETE FROM usage u
     WHERE u.cell_execution_id = p_cell_execution AND u.attempt = p_attempt AND u.state = 'reserved'
       AND (p_charge IS NULL OR (u.execution_id = p_charge AND u.source = p_source))
    RETURNING u.dispatch_id, u.workspace_id, u.milli)
  SELECT array_agg(dispatch_id), array_agg(workspace_id), array_agg(milli) INTO runs, spaces, amounts FROM rel;
  IF amounts IS NULL THEN
    RETURN 0;
  END IF;
  -- The capped run's row before the workspace's: the order a reservation takes them in.
  UPDATE dispatches d SET committed_milli = d.committed_milli - r.m
    FROM (SELECT x.id, sum(x.m) AS m FROM unnest(runs, amounts) AS x(id, m)
           WHERE x.id IS NOT NULL GROUP BY x.id) r
   WHERE d.id = r.id AND d.max_credits IS NOT NULL;
  UPDATE workspaces w SET reserved_milli = w.reserved_milli - r.m
    FROM (SELECT x.id, sum(x.m) AS m FROM unnest(spaces, amounts) AS x(id, m) GROUP BY x.id) r
   WHERE w.id = r.id;
  RETURN (SELECT sum(x) FROM unnest(amounts) AS x);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cellflow_release_credits() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cellflow_release_reserved(OLD.execution_id, OLD.attempt);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cells_release_credits AFTER UPDATE ON cells FOR EACH ROW
WHEN (OLD.credits_held AND OLD.status = 'running'
      AND (NEW.status <> 'running' OR NEW.execution_id <> OLD.execution_id OR NEW.attempt <> OLD.attempt))
EXECUTE FUNCTION cellflow_release_credits();
--> statement-breakpoint
CREATE TRIGGER cells_release_credits_deleted AFTER DELETE ON cells FOR EACH ROW
WHEN (OLD.credits_held)
EXECUTE FUNCTION cellflow_release_credits();
--> statement-breakpoint
-- custom: an attempt's record keeps its details (what each provider did, what it cost).
CREATE OR REPLACE FUNCTION cellflow_record_attempt() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ended boolean := OLD.status IN ('completed', 'error', 'cancelled');
  interrupted boolean := OLD.status = 'running' AND NEW.status = 'queued'
                         AND OLD.execution_id = NEW.execution_id;
BEGIN
  INSERT INTO cell_attempts (table_id, row_id, group_id, execution_id, attempt, status, outcome, error,
                             started_at, ended_at, outputs, block_errors, details, resumed_from)
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
          OLD.block_errors, OLD.details, OLD.resumed_from);
  RETURN NULL;
END $$;
