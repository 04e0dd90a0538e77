-- custom: run_group_cell_counts kept by the database. The fold (store/progress/fold.ts)
-- deletes the deltas it adds to the base tables; this statement trigger adds the same
-- deltas, per (run, group, status), to run_group_cell_counts in that statement, so a read
-- (base + deltas, one snapshot) sees each delta on one side only, and a fold of any code
-- version (one running beside a newer one during a deploy) keeps the table. A delta of a
-- run gone is dropped, as the fold drops it from run_cell_counts; a run deleted while the
-- fold runs fails the fold's foreign key check as it fails the fold's own insert there,
-- and the next fold drops the delta. No lock on the runs beyond that check: a lock held to
-- the fold's commit would make every window slide of those runs wait for it.
CREATE OR REPLACE FUNCTION cellflow_fold_run_groups() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_group_cell_counts AS c (dispatch_id, group_id, status, n)
  SELECT f.dispatch_id, f.group_id, f.status, sum(f.n)
    FROM folded f
   WHERE f.group_id IS NOT NULL AND f.dispatch_id IS NOT NULL AND f.status IS NOT NULL
     AND EXISTS (SELECT 1 FROM dispatches d WHERE d.id = f.dispatch_id)
   GROUP BY 1, 2, 3 HAVING sum(f.n) <> 0
   ORDER BY 1, 2, 3
  ON CONFLICT (dispatch_id, group_id, status) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cell_count_deltas_fold_run_groups AFTER DELETE ON cell_count_deltas
REFERENCING OLD TABLE AS folded
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_fold_run_groups();
