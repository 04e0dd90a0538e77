-- custom: progress counters without a hot row. A counter row per group that every
-- transition updated would make every carrier of a table wait on the one before it, so
-- each statement on `cells` appends what it changed instead, aggregated per (table, group,
-- run, status, outcome) from its transition tables: a bulk stamp of 10,000 cells appends
-- one row per key, not 10,000. An update that moves no key (progress, details, a claim's
-- attempt) appends nothing. Outcomes count only on completed cells. The fold
-- (store/progress/fold.ts) moves the deltas into cell_counts, run_cell_counts and
-- table_counts; a read adds the base and the deltas not folded yet, in one snapshot.
CREATE OR REPLACE FUNCTION cellflow_count_cells() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status,
           CASE WHEN status = 'completed' THEN outcome END, count(*)
      FROM new_cells GROUP BY 1, 2, 3, 4, 5;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status,
           CASE WHEN status = 'completed' THEN outcome END, -count(*)
      FROM old_cells GROUP BY 1, 2, 3, 4, 5;
  ELSE
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status, outcome, sum(n)
      FROM (SELECT table_id, group_id, dispatch_id, status,
                   CASE WHEN status = 'completed' THEN outcome END AS outcome, -1 AS n
              FROM old_cells
            UNION ALL
            SELECT table_id, group_id, dispatch_id, status,
                   CASE WHEN status = 'completed' THEN outcome END, 1
              FROM new_cells) moved
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(n) <> 0;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cells_count_inserted AFTER INSERT ON cells
REFERENCING NEW TABLE AS new_cells
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_count_cells();
--> statement-breakpoint
CREATE TRIGGER cells_count_updated AFTER UPDATE ON cells
REFERENCING OLD TABLE AS old_cells NEW TABLE AS new_cells
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_count_cells();
--> statement-breakpoint
CREATE TRIGGER cells_count_deleted AFTER DELETE ON cells
REFERENCING OLD TABLE AS old_cells
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_count_cells();
--> statement-breakpoint
-- custom: a table's row count the same way (group_id null), so `neverRun` (rows without a
-- cell of the group) needs no count(*) over a million rows. Rows never change table.
CREATE OR REPLACE FUNCTION cellflow_count_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO cell_count_deltas (table_id, n) SELECT table_id, count(*) FROM new_rows GROUP BY 1;
  ELSE
    INSERT INTO cell_count_deltas (table_id, n) SELECT table_id, -count(*) FROM old_rows GROUP BY 1;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER rows_count_inserted AFTER INSERT ON rows
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_count_rows();
--> statement-breakpoint
CREATE TRIGGER rows_count_deleted AFTER DELETE ON rows
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION cellflow_count_rows();
--> statement-breakpoint
-- custom: the backfill, after the triggers: creating them locked cells and rows against
-- writes until this migration commits, so every cell is counted once, here or by them.
INSERT INTO cell_counts (table_id, group_id, status, outcome, n)
SELECT table_id, group_id, status, CASE WHEN status = 'completed' THEN outcome END, count(*)
  FROM cells GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO run_cell_counts (dispatch_id, status, n)
SELECT c.dispatch_id, c.status, count(*)
  FROM cells c JOIN dispatches d ON d.id = c.dispatch_id
 GROUP BY 1, 2;
--> statement-breakpoint
INSERT INTO table_counts (table_id, rows)
SELECT t.id, (SELECT count(*) FROM rows r WHERE r.table_id = t.id) FROM tables t;
