-- The sliding window step (see 0011) with an optional cap on the rows handed out. A
-- carrier that finished a row frees one slot and asks for at most one row, which it then
-- carries itself: without the cap, the first of two carriers finishing together took
-- both slots, queued one as a job, and the second found nothing and ended its job, so
-- half the hand-outs went through the job queue (and woke every idle worker).
DROP FUNCTION IF EXISTS cellflow_advance_dispatch(text);
CREATE FUNCTION cellflow_advance_dispatch(p_dispatch text, p_max int DEFAULT NULL)
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
  IF p_max IS NOT NULL THEN room := least(room, p_max); END IF;

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
