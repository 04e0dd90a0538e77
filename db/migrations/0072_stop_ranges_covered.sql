-- custom: a `where` Stop's rows move from one entry per row (stop_rows) to ranges of
-- positions (stop_ranges, see db/schema/stops.ts). The entries already recorded become one
-- range each, at their row's position (a deleted row has no cell left to cover). The lock
-- (held to the end of the migration, which drops the list) keeps a process of the version
-- before from listing a Stop's rows after the copy.
LOCK TABLE stop_rows IN EXCLUSIVE MODE;
--> statement-breakpoint
INSERT INTO stop_ranges (seq, lo, hi)
SELECT sr.seq, r.position, r.position FROM stop_rows sr JOIN rows r ON r.id = sr.row_id
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- custom: whether position `pos` is among the rows `where` Stop `stop` matched: the range
-- that starts at or before it, read off the key's last such entry, reaches it. One probe
-- however many ranges the Stop has, and planned so whatever the statistics say: a plan made
-- while the table held a few ranges (a sort of a scan, cheapest then), kept by a prepared
-- statement, would read every range below each position after a Stop recorded 250,000.
-- A null position (no such row) is in none.
CREATE OR REPLACE FUNCTION cellflow_in_stop(stop bigint, pos bigint) RETURNS boolean
LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off AS $$
  SELECT coalesce((SELECT sr.hi >= pos FROM stop_ranges sr
                    WHERE sr.seq = stop AND sr.lo <= pos ORDER BY sr.lo DESC LIMIT 1), false)
$$;
--> statement-breakpoint
-- custom: what a large Stop's cancel scope covers (see 0058), for the cell of run d, row r
-- and group g at position pos: the cell's own `row_position`, so the test holds for a cell
-- whose row is already gone (a delete's count trigger judges the cells its cascade removed).
CREATE OR REPLACE FUNCTION cellflow_covered(d text, r text, g text, pos bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT d IS NOT NULL AND EXISTS (
    SELECT 1 FROM cancel_scopes s
     WHERE s.dispatch_id = d
       AND (s.group_ids IS NULL OR g = ANY (s.group_ids))
       AND (s.row_ids IS NULL OR r = ANY (s.row_ids))
       AND (s.stop_seq IS NULL OR cellflow_in_stop(s.stop_seq, pos)))
$$;
--> statement-breakpoint
-- custom: the same for a caller that has no position at hand (the window step, a claim's
-- fresh read): the row's, which exists for every cell such a caller reads.
CREATE OR REPLACE FUNCTION cellflow_covered(d text, r text, g text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT cellflow_covered(d, r, g, (SELECT p.position FROM rows p WHERE p.id = r))
$$;
--> statement-breakpoint
-- custom: a cell's status as every read reports it, from the cell's own columns.
CREATE OR REPLACE FUNCTION cellflow_cell_status(st cell_status, d text, r text, g text, pos bigint)
RETURNS cell_status
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN st = 'queued' AND d IS NOT NULL AND cellflow_covered(d, r, g, pos)
              THEN 'cancelled'::cell_status ELSE st END
$$;
--> statement-breakpoint
-- custom: the count trigger of 0058, judging a cell by its own position (a row deleted with
-- its cells is gone by the time the trigger reads the cascade's old cells).
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
      FROM (SELECT o.*, CASE WHEN scoped
                             THEN cellflow_cell_status(o.status, o.dispatch_id, o.row_id, o.group_id, o.row_position)
                             ELSE o.status END AS st
              FROM old_cells o) x
     GROUP BY 1, 2, 3, 4, 5;
  ELSE
    INSERT INTO cell_count_deltas (table_id, group_id, dispatch_id, status, outcome, n)
    SELECT table_id, group_id, dispatch_id, status, outcome, sum(n)
      FROM (SELECT table_id, group_id, dispatch_id, st AS status,
                   CASE WHEN st = 'completed' THEN outcome END AS outcome, -1 AS n
              FROM (SELECT o.*, CASE WHEN scoped
                                     THEN cellflow_cell_status(o.status, o.dispatch_id, o.row_id, o.group_id, o.row_position)
                                     ELSE o.status END AS st
                      FROM old_cells o) oc
            UNION ALL
            SELECT table_id, group_id, dispatch_id, st,
                   CASE WHEN st = 'completed' THEN outcome END, 1
              FROM (SELECT n.*, CASE WHEN scoped
                                     THEN cellflow_cell_status(n.status, n.dispatch_id, n.row_id, n.group_id, n.row_position)
                                     ELSE n.status END AS st
                      FROM new_cells n) nc) moved
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(n) <> 0;
  END IF;
  RETURN NULL;
END $$;
