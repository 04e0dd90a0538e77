-- custom: the sliding window step of 0060, judging a cell's coverage by the cell's own
-- position (cellflow_covered's four-argument form, migration stop_ranges_covered) instead
-- of looking its row up: the step walks every covered cell ahead of the cursor once after a
-- Stop, and a `where` Stop over the next 100,000 rows' cells made that walk 1.4 s.
CREATE OR REPLACE FUNCTION cellflow_advance_dispatch(p_dispatch text, p_max int, p_grace_ms int)
RETURNS TABLE (row_ids text[], completed boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  d record;
  flying int;
  room int;
  picked text[];
  last_pos bigint;
  first_live bigint;
  new_floor bigint;
  record_now boolean;
  scoped boolean;
BEGIN
  SELECT id, table_id, "cursor", "floor", "window", scanline, stamping, cardinality(group_ids) AS g,
         prev_cursor, prev_cursor_at
    INTO d FROM dispatches WHERE id = p_dispatch AND status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT ARRAY[]::text[], false;
    RETURN;
  END IF;
  -- A large Stop's scope on this run: its covered cells still read `queued` in the table
  -- until the rewrite reaches them, but they are cancelled. Without a scope (nearly always)
  -- the tests below stop at `NOT scoped` and cost nothing.
  scoped := EXISTS (SELECT 1 FROM cancel_scopes s WHERE s.dispatch_id = d.id);
  record_now := d.prev_cursor_at IS NULL
                OR d.prev_cursor_at < now() - p_grace_ms * interval '1 millisecond';

  SELECT c.row_position INTO first_live FROM cells c
   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND (NOT scoped OR c.status = 'running' OR NOT cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position))
     AND c.row_position > d."floor" AND c.row_position <= d."cursor"
   ORDER BY c.row_position LIMIT 1;
  new_floor := coalesce(first_live - 1, d."cursor");

  SELECT count(DISTINCT c.row_id)::int INTO flying FROM cells c
   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND (NOT scoped OR c.status = 'running' OR NOT cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position))
     AND c.row_position > new_floor AND c.row_position <= d."cursor";
  room := CASE WHEN d.scanline AND flying > 0 THEN 0 ELSE greatest(d."window" - flying, 0) END;
  -- A scan-line window refills whole once empty: capped at the releasing carriers' slots,
  -- it refilled one row at a time and ran serially.
  IF p_max IS NOT NULL AND NOT d.scanline THEN room := least(room, p_max); END IF;

  -- Each row has at most g cells, so the first `room` rows lie within the first room·g cells.
  -- A row some cell of which is already running was reached by another run's carrier:
  -- it takes a slot (the cursor moves past it, so it counts as in flight) but gets no
  -- carrier of its own.
  SELECT array_agg(x.row_id ORDER BY x.row_position) FILTER (WHERE NOT x.carried), max(x.row_position)
    INTO picked, last_pos
    FROM (SELECT n.row_id, n.row_position, bool_or(n.status = 'running') AS carried
            FROM (SELECT c.row_id, c.row_position, c.status FROM cells c
                   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND (NOT scoped OR c.status = 'running' OR NOT cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position)) AND c.row_position > d."cursor"
                   ORDER BY c.row_position LIMIT room * d.g) n
           GROUP BY n.row_id, n.row_position
           ORDER BY n.row_position LIMIT room) x;

  IF last_pos IS NOT NULL THEN
    UPDATE dispatches SET "cursor" = last_pos, "floor" = new_floor, updated_at = now(),
           aged_cursor = CASE WHEN record_now THEN d.prev_cursor ELSE aged_cursor END,
           prev_cursor = CASE WHEN record_now THEN last_pos ELSE prev_cursor END,
           prev_cursor_at = CASE WHEN record_now THEN now() ELSE prev_cursor_at END
     WHERE id = d.id;
    RETURN QUERY SELECT coalesce(picked, ARRAY[]::text[]), false;
    RETURN;
  END IF;

  IF NOT d.stamping
     AND NOT EXISTS (SELECT 1 FROM cells c WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND (NOT scoped OR c.status = 'running' OR NOT cellflow_covered(c.dispatch_id, c.row_id, c.group_id, c.row_position))
                        AND c.row_position > new_floor) THEN
    UPDATE dispatches SET status = 'completed', "floor" = new_floor, finished_at = now(), updated_at = now()
     WHERE id = d.id;
    INSERT INTO events (table_id, kind, data)
      VALUES (d.table_id, 'dispatch', jsonb_build_object('dispatchId', d.id, 'status', 'completed'));
    PERFORM pg_notify('cellflow_events', d.table_id);
    RETURN QUERY SELECT ARRAY[]::text[], true;
    RETURN;
  END IF;

  -- The cursor did not move: a record is still due when it moved since the last one
  -- (with nothing recorded since, a cursor that stops for good would never age).
  record_now := record_now AND d.prev_cursor < d."cursor";
  IF new_floor <> d."floor" OR record_now THEN
    UPDATE dispatches SET "floor" = new_floor,
           aged_cursor = CASE WHEN record_now THEN d.prev_cursor ELSE aged_cursor END,
           prev_cursor = CASE WHEN record_now THEN d."cursor" ELSE prev_cursor END,
           prev_cursor_at = CASE WHEN record_now THEN now() ELSE prev_cursor_at END
     WHERE id = d.id;
  END IF;
  RETURN QUERY SELECT ARRAY[]::text[], false;
END;
$$;
