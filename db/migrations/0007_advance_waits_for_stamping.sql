-- The sliding window step (see 0002, 0005): a dispatch still being stamped by its
-- background job is never completed, however empty its window looks.
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
BEGIN
  SELECT id, table_id, "cursor", "window", scanline, stamping, cardinality(group_ids) AS g
    INTO d FROM dispatches WHERE id = p_dispatch AND status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT ARRAY[]::text[], false;
    RETURN;
  END IF;

  SELECT count(DISTINCT c.row_id)::int INTO flying FROM cells c
   WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running') AND c.row_position <= d."cursor";
  room := CASE WHEN d.scanline AND flying > 0 THEN 0 ELSE greatest(d."window" - flying, 0) END;

  -- Each row has at most g cells, so the first `room` rows lie within the first room·g cells.
  SELECT array_agg(x.row_id ORDER BY x.row_position), max(x.row_position) INTO picked, last_pos
    FROM (SELECT DISTINCT n.row_id, n.row_position
            FROM (SELECT c.row_id, c.row_position FROM cells c
                   WHERE c.dispatch_id = d.id AND c.status = 'queued' AND c.row_position > d."cursor"
                   ORDER BY c.row_position LIMIT room * d.g) n
           ORDER BY n.row_position LIMIT room) x;

  IF picked IS NOT NULL THEN
    UPDATE dispatches SET "cursor" = last_pos, updated_at = now() WHERE id = d.id;
    RETURN QUERY SELECT picked, false;
    RETURN;
  END IF;

  IF NOT d.stamping
     AND NOT EXISTS (SELECT 1 FROM cells c WHERE c.dispatch_id = d.id AND c.status IN ('queued', 'running')) THEN
    UPDATE dispatches SET status = 'completed', finished_at = now(), updated_at = now() WHERE id = d.id;
    INSERT INTO events (table_id, kind, data)
      VALUES (d.table_id, 'dispatch', jsonb_build_object('dispatchId', d.id, 'status', 'completed'));
    PERFORM pg_notify('cellflow_events', d.table_id);
    RETURN QUERY SELECT ARRAY[]::text[], true;
    RETURN;
  END IF;

  RETURN QUERY SELECT ARRAY[]::text[], false;
END;
$$;
