-- The sliding window step (see 0002, 0005, 0007), counting from the dispatch's floor.
-- Finished cells leave dead entries in the window's partial index until vacuum; counting
-- in-flight rows from the start of the dispatch walked all of them on every step, so a
-- step cost grew with the rows already done (W1 fell from 300 to 116 cells/s between
-- 3,000 and 10,000 rows). The floor is the position just before the first row still in
-- flight: no row before it is queued or running, it only moves forward, and each step
-- walks the index from it, so a dead entry is walked by a bounded number of steps.
-- In a VOLATILE plpgsql function every statement takes a fresh snapshot: after the lock
-- is granted, the counts see every cell change committed before it, so the last carrier
-- to advance always sees the whole dispatch and can complete it.
CREATE OR REPLACE FUNCTION cellflow_advance_dispatch(p_dispatch text)
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
BEGIN
  SELECT id, table_id, "cursor", "floor", "window", scanline, stamping, cardinality(group_ids) AS g
    INTO d FROM dispatches WHERE id = p_dispatch AND status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT ARRAY[]::text[], false;
    RETURN;
  END IF;

  SELECT c.row_position INTO first_live FROM cells c
   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND c.row_position > d."floor" AND c.row_position <= d."cursor"
   ORDER BY c.row_position LIMIT 1;
  new_floor := coalesce(first_live - 1, d."cursor");

  SELECT count(DISTINCT c.row_id)::int INTO flying FROM cells c
   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
     AND c.row_position > new_floor AND c.row_position <= d."cursor";
  room := CASE WHEN d.scanline AND flying > 0 THEN 0 ELSE greatest(d."window" - flying, 0) END;

  -- Each row has at most g cells, so the first `room` rows lie within the first room·g cells.
  SELECT array_agg(x.row_id ORDER BY x.row_position), max(x.row_position) INTO picked, last_pos
    FROM (SELECT DISTINCT n.row_id, n.row_position
            FROM (SELECT c.row_id, c.row_position FROM cells c
                   WHERE c.dispatch_id = d.id AND c.status = 'queued' AND c.row_position > d."cursor"
                   ORDER BY c.row_position LIMIT room * d.g) n
           ORDER BY n.row_position LIMIT room) x;

  IF picked IS NOT NULL THEN
    UPDATE dispatches SET "cursor" = last_pos, "floor" = new_floor, updated_at = now() WHERE id = d.id;
    RETURN QUERY SELECT picked, false;
    RETURN;
  END IF;

  IF NOT d.stamping
     AND NOT EXISTS (SELECT 1 FROM cells c WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')
                        AND c.row_position > new_floor) THEN
    UPDATE dispatches SET status = 'completed', "floor" = new_floor, finished_at = now(), updated_at = now()
     WHERE id = d.id;
    INSERT INTO events (table_id, kind, data)
      VALUES (d.table_id, 'dispatch', jsonb_build_object('dispatchId', d.id, 'status', 'completed'));
    PERFORM pg_notify('cellflow_events', d.table_id);
    RETURN QUERY SELECT ARRAY[]::text[], true;
    RETURN;
  END IF;

  IF new_floor <> d."floor" THEN
    UPDATE dispatches SET "floor" = new_floor WHERE id = d.id;
  END IF;
  RETURN QUERY SELECT ARRAY[]::text[], false;
END;
$$;
