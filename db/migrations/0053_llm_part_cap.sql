-- custom: a weighted take's part cap (src/limits/rate/slots.ts `partWeight`): in a part of
-- the span (a sixth) no entry counts more than p_part_cap, what the key's calls really use
-- of late, so calls in flight at their whole reservation no longer hold most of a part;
-- the whole span still counts every entry in full. The three functions of llm_rate_take
-- are replaced by ones with the cap as a last argument defaulting to NULL (no cap: least()
-- ignores NULL), so a worker of the previous release, calling with twelve arguments,
-- keeps its behaviour through a rolling deploy. Same invariants as llm_rate_take.
DROP FUNCTION cellflow_rate_take_weighted(text, text, int, int, int, int, int, int, int, int, int, int);
--> statement-breakpoint
DROP FUNCTION cellflow_rate_weighted_slot(bigint[], int[], bigint, int, int, bigint, int, int, bigint, int, int, bigint);
--> statement-breakpoint
DROP FUNCTION cellflow_rate_room(bigint[], int[], bigint, int, int, bigint);
--> statement-breakpoint
-- The slot after which the oldest entries have left p_span_ms enough for p_weight under
-- p_cap (entries oldest first), each entry counted at most p_entry_cap.
CREATE FUNCTION cellflow_rate_room(
  p_ats bigint[], p_ws int[], p_slot bigint, p_weight int, p_cap int, p_span_ms bigint,
  p_entry_cap int DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  n int := cardinality(p_ats);
  total bigint;
  slot bigint := p_slot;
  i int := 1;
BEGIN
  SELECT coalesce(sum(least(w, p_entry_cap)), 0) INTO total FROM unnest(p_ws) w;
  WHILE total + p_weight > p_cap AND i <= n LOOP
    total := total - least(p_ws[i], p_entry_cap);
    slot := greatest(slot, p_ats[i] + p_span_ms);
    i := i + 1;
  END LOOP;
  RETURN slot;
END $$;
--> statement-breakpoint
CREATE FUNCTION cellflow_rate_weighted_slot(
  p_ats bigint[], p_ws int[], p_now_ms bigint, p_weight int, p_limit int, p_span_ms bigint,
  p_spacing_ms int, p_weight_limit int, p_part_span_ms bigint, p_part_limit int,
  p_ahead_limit int, p_cool_until bigint, p_part_cap int DEFAULT NULL,
  OUT slot bigint, OUT ahead_wait bigint
)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  n int := cardinality(p_ats);
  ahead bigint;
BEGIN
  slot := greatest(cellflow_rate_slot(p_ats, p_now_ms, p_limit, p_span_ms, p_spacing_ms),
                   coalesce(p_cool_until, 0));
  slot := cellflow_rate_room(p_ats, p_ws, slot, p_weight, p_weight_limit, p_span_ms);
  slot := cellflow_rate_room(p_ats, p_ws, slot, least(p_weight, p_part_cap), p_part_limit,
                             p_part_span_ms, p_part_cap);
  SELECT coalesce(sum(w), 0) INTO ahead FROM unnest(p_ats, p_ws) e(a, w) WHERE a > p_now_ms;
  ahead_wait := 0;
  IF ahead > 0 AND ahead + p_weight > p_ahead_limit THEN
    FOR i IN 1..n LOOP
      CONTINUE WHEN p_ats[i] <= p_now_ms;
      ahead := ahead - p_ws[i];
      ahead_wait := p_ats[i] - p_now_ms;
      EXIT WHEN ahead = 0 OR ahead + p_weight <= p_ahead_limit;
    END LOOP;
  END IF;
END $$;
--> statement-breakpoint
CREATE FUNCTION cellflow_rate_take_weighted(
  p_key text, p_cool_key text, p_limit int, p_window_ms int, p_spacing_ms int,
  p_guard_ms int, p_reach_ms int, p_weight_limit int, p_weight int, p_part_span_ms int,
  p_part_limit int, p_ahead_limit int, p_part_cap int DEFAULT NULL
)
RETURNS TABLE (granted boolean, wait_ms int, at_ms bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ats bigint[];
  ws int[];
  now_ms bigint;
  span bigint := p_window_ms + p_guard_ms;
  cool bigint;
  r record;
BEGIN
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT c.until_ms INTO cool FROM rate_limit_cool_downs c WHERE c.key = p_cool_key;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  SELECT coalesce(array_agg(a ORDER BY a, o), '{}'), coalesce(array_agg(w ORDER BY a, o), '{}')
    INTO ats, ws
    FROM rate_limit_logs l, unnest(l.grants, l.weights) WITH ORDINALITY e(a, w, o)
   WHERE l.key = p_key AND a > now_ms - span;
  SELECT * INTO r FROM cellflow_rate_weighted_slot(ats, ws, now_ms, p_weight, p_limit, span,
    p_spacing_ms, p_weight_limit, p_part_span_ms, p_part_limit, p_ahead_limit, cool,
    p_part_cap);
  IF r.slot - now_ms > p_reach_ms OR r.ahead_wait > 0 THEN
    RETURN QUERY SELECT false, greatest(1, r.slot - now_ms - p_reach_ms, r.ahead_wait)::int,
                        NULL::bigint;
    RETURN;
  END IF;
  PERFORM 1 FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limit_logs (key, weights) VALUES (p_key, '{}') ON CONFLICT (key) DO NOTHING;
    PERFORM 1 FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  END IF;
  -- The decision again, on the locked row and a clock read after the lock was held.
  SELECT c.until_ms INTO cool FROM rate_limit_cool_downs c WHERE c.key = p_cool_key;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  SELECT coalesce(array_agg(a ORDER BY a, o), '{}'), coalesce(array_agg(w ORDER BY a, o), '{}')
    INTO ats, ws
    FROM rate_limit_logs l, unnest(l.grants, l.weights) WITH ORDINALITY e(a, w, o)
   WHERE l.key = p_key AND a > now_ms - span;
  SELECT * INTO r FROM cellflow_rate_weighted_slot(ats, ws, now_ms, p_weight, p_limit, span,
    p_spacing_ms, p_weight_limit, p_part_span_ms, p_part_limit, p_ahead_limit, cool,
    p_part_cap);
  IF r.slot - now_ms > p_reach_ms OR r.ahead_wait > 0 THEN
    RETURN QUERY SELECT false, greatest(1, r.slot - now_ms - p_reach_ms, r.ahead_wait)::int,
                        NULL::bigint;
    RETURN;
  END IF;
  UPDATE rate_limit_logs l SET grants = ats || r.slot, weights = ws || p_weight
   WHERE l.key = p_key;
  RETURN QUERY SELECT true, (r.slot - now_ms)::int, r.slot;
END $$;
