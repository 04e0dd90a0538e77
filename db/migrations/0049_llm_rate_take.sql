-- custom: the weighted sliding log of an llm model's requests and tokens per minute
-- (src/limits/rate/slots.ts `nextWeightedSlot` states the rules; the Redis limiter runs
-- the same in its Lua script). A take appends (slot, weight): the slot keeps the calls'
-- rules of cellflow_rate_slot, no span holding more than p_weight_limit in all nor a part
-- of the span (p_part_span_ms) more than p_part_limit, and no slot before the key's
-- cool-down; it is refused while the weight reserved ahead of now would pass
-- p_ahead_limit (with how long until the nearest reserved slot comes).
-- Invariants (as cellflow_rate_take's):
-- - A refusal is a read: the log is read without a lock and a refusal found there writes
--   nothing; the locked read decides every grant.
-- - A grant is decided under the key's row lock, with the clock read after the lock is
--   held, so every process's entries are placed in order by one clock (the database's).
-- - A take that cannot get the lock within 2 s fails (the caller answers "unavailable").
-- The slot after which the oldest entries have left p_span_ms enough for p_weight under
-- p_cap (entries oldest first).
CREATE FUNCTION cellflow_rate_room(
  p_ats bigint[], p_ws int[], p_slot bigint, p_weight int, p_cap int, p_span_ms bigint
)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  n int := cardinality(p_ats);
  total bigint;
  slot bigint := p_slot;
  i int := 1;
BEGIN
  SELECT coalesce(sum(w), 0) INTO total FROM unnest(p_ws) w;
  WHILE total + p_weight > p_cap AND i <= n LOOP
    total := total - p_ws[i];
    slot := greatest(slot, p_ats[i] + p_span_ms);
    i := i + 1;
  END LOOP;
  RETURN slot;
END $$;
--> statement-breakpoint
CREATE FUNCTION cellflow_rate_weighted_slot(
  p_ats bigint[], p_ws int[], p_now_ms bigint, p_weight int, p_limit int, p_span_ms bigint,
  p_spacing_ms int, p_weight_limit int, p_part_span_ms bigint, p_part_limit int,
  p_ahead_limit int, p_cool_until bigint,
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
  slot := cellflow_rate_room(p_ats, p_ws, slot, p_weight, p_part_limit, p_part_span_ms);
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
  p_part_limit int, p_ahead_limit int
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
    p_spacing_ms, p_weight_limit, p_part_span_ms, p_part_limit, p_ahead_limit, cool);
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
    p_spacing_ms, p_weight_limit, p_part_span_ms, p_part_limit, p_ahead_limit, cool);
  IF r.slot - now_ms > p_reach_ms OR r.ahead_wait > 0 THEN
    RETURN QUERY SELECT false, greatest(1, r.slot - now_ms - p_reach_ms, r.ahead_wait)::int,
                        NULL::bigint;
    RETURN;
  END IF;
  UPDATE rate_limit_logs l SET grants = ats || r.slot, weights = ws || p_weight
   WHERE l.key = p_key;
  RETURN QUERY SELECT true, (r.slot - now_ms)::int, r.slot;
END $$;
--> statement-breakpoint
-- Where the entry (p_at, p_w) of a weighted log is (its first such; entries alike are
-- interchangeable), or null: what a settle or a release rewrites, found on the row the
-- statement has locked.
CREATE FUNCTION cellflow_rate_entry(p_ats bigint[], p_ws int[], p_at bigint, p_w int)
RETURNS int
LANGUAGE sql IMMUTABLE AS $$
  SELECT o::int FROM unnest(p_ats, p_ws) WITH ORDINALITY e(a, w, o)
   WHERE a = p_at AND w = p_w ORDER BY o LIMIT 1
$$;
