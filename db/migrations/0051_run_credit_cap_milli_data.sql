-- custom: a run's credit cap moves to milli-credits (a cap may be fractional, as every
-- credit amount is): the caps of existing runs carried over, and the release of a
-- reservation keeps a capped run's committed total by the new column.
UPDATE "dispatches" SET "max_credits_milli" = "max_credits"::bigint * 1000 WHERE "max_credits" IS NOT NULL;
--> statement-breakpoint
-- One release for both callers: the trigger of migration `credit_ledger_release` (everything
-- the attempt still holds) and an attempt giving back one charge key early
-- (store/usage/release.ts). As before, with the capped run found by its milli cap.
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
   WHERE d.id = r.id AND d.max_credits_milli IS NOT NULL;
  UPDATE workspaces w SET reserved_milli = w.reserved_milli - r.m
    FROM (SELECT x.id, sum(x.m) AS m FROM unnest(spaces, amounts) AS x(id, m) GROUP BY x.id) r
   WHERE w.id = r.id;
  RETURN (SELECT sum(x) FROM unnest(amounts) AS x);
END $$;
