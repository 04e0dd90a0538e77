-- custom: what a large Stop's cancel scope covers (db/schema/cancel-scopes.ts), defined once
-- here for every read, writer and trigger. A cell is covered while it is `queued` under a
-- run that has a scope matching its group and row; it then counts and reads as `cancelled`.
CREATE OR REPLACE FUNCTION cellflow_covered(d text, r text, g text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT d IS NOT NULL AND EXISTS (
    SELECT 1 FROM cancel_scopes s
     WHERE s.dispatch_id = d
       AND (s.group_ids IS NULL OR g = ANY (s.group_ids))
       AND (s.row_ids IS NULL OR r = ANY (s.row_ids))
       AND (s.stop_seq IS NULL
            OR EXISTS (SELECT 1 FROM stop_rows sr WHERE sr.seq = s.stop_seq AND sr.row_id = r)))
$$;
--> statement-breakpoint
-- custom: a cell's status as every read reports it.
CREATE OR REPLACE FUNCTION cellflow_cell_status(st cell_status, d text, r text, g text) RETURNS cell_status
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN st = 'queued' AND d IS NOT NULL AND cellflow_covered(d, r, g)
              THEN 'cancelled'::cell_status ELSE st END
$$;
--> statement-breakpoint
-- custom: the scope lock of a table. A Stop that records scopes takes it exclusively before
-- it counts what they cover; a claim, and every statement that moves a queued cell of a
-- run (its count trigger), take it shared and then read the scopes with a fresh snapshot
-- (VOLATILE: each query sees what committed before it). So a writer either committed before
-- the Stop counted (and is counted as what it wrote) or sees the scope (and takes the cell
-- as cancelled): a claim never revives a covered cell, and the counts never count one twice.
-- Two int4 keys: a lock space apart from the bigint row and stop locks.
CREATE OR REPLACE FUNCTION cellflow_scope_lock_shared(t text) RETURNS boolean
LANGUAGE sql VOLATILE AS $$ SELECT true FROM (SELECT pg_advisory_xact_lock_shared(1667462003, hashtext(t))) x $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cellflow_scope_lock(t text) RETURNS boolean
LANGUAGE sql VOLATILE AS $$ SELECT true FROM (SELECT pg_advisory_xact_lock(1667462003, hashtext(t))) x $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cellflow_covered_now(d text, r text, g text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  covered boolean;
BEGIN
  SELECT cellflow_covered(d, r, g) INTO covered;
  RETURN covered;
END $$;
--> statement-breakpoint
-- custom: the counters count covered cells as `cancelled` (the Stop moved their counts when
-- it recorded the scope), so a write of one (the rewrite, a new run's re-stamp, a delete)
-- moves the counts from `cancelled`, not from `queued`. A stamp's insert never writes a
-- covered cell (the stopped run stamps nothing its Stop covers), so it is counted as written.
CREATE OR REPLACE FUNCTION cellflow_count_cells() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  scoped boolean := false;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status,
           CASE WHEN status = 'completed' THEN outcome END, count(*)
      FROM new_cells GROUP BY 1, 2, 3, 4, 5;
    RETURN NULL;
  END IF;
  PERFORM cellflow_scope_lock_shared(t.table_id)
     FROM (SELECT DISTINCT table_id FROM old_cells
            WHERE status = 'queued' AND dispatch_id IS NOT NULL ORDER BY 1) t;
  SELECT EXISTS (SELECT 1 FROM cancel_scopes s
                  WHERE s.table_id IN (SELECT DISTINCT table_id FROM old_cells)) INTO scoped;
  IF TG_OP = 'DELETE' THEN
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, st,
           CASE WHEN st = 'completed' THEN outcome END, -count(*)
      FROM (SELECT o.*, CASE WHEN scoped THEN cellflow_cell_status(o.status, o.dispatch_id, o.row_id, o.group_id)
                             ELSE o.status END AS st
              FROM old_cells o) x
     GROUP BY 1, 2, 3, 4, 5;
  ELSE
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status, outcome, sum(n)
      FROM (SELECT table_id, group_id, dispatch_id, st AS status,
                   CASE WHEN st = 'completed' THEN outcome END AS outcome, -1 AS n
              FROM (SELECT o.*, CASE WHEN scoped THEN cellflow_cell_status(o.status, o.dispatch_id, o.row_id, o.group_id)
                                     ELSE o.status END AS st
                      FROM old_cells o) oc
            UNION ALL
            SELECT table_id, group_id, dispatch_id, st,
                   CASE WHEN st = 'completed' THEN outcome END, 1
              FROM (SELECT n.*, CASE WHEN scoped THEN cellflow_cell_status(n.status, n.dispatch_id, n.row_id, n.group_id)
                                     ELSE n.status END AS st
                      FROM new_cells n) nc) moved
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(n) <> 0;
  END IF;
  RETURN NULL;
END $$;
