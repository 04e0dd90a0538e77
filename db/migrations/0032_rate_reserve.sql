-- custom: the Postgres rate limiter reserves a call's turn instead of refusing it
-- (src/limits/rate/slots.ts states the log's rules; this is the same log the Redis
-- limiter keeps in its Lua script). A take appends the earliest time after the log's
-- newest entry that keeps the rules, now or ahead, and answers how long until then; a
-- slot farther ahead than p_reach_ms (the horizon, or the caller's deadline) is refused.
-- Invariants:
-- - A refusal is a read: the log is read without a lock, and a slot out of reach is
--   refused there, nothing locked or written. That read may miss entries committed since
--   (its slot is then too early, and the locked read decides) or still see one given back
--   since (it refuses a little early; the caller asks again): it never grants anything.
-- - A grant is decided under the key's row lock, with the clock read after the lock is
--   held, so every process's entries are placed in order by one clock (the database's).
-- - A take that cannot get the lock within 2 s fails (the caller answers "unavailable",
--   never "ok"). synchronous_commit is off for the take alone: an entry lost to a
--   database crash only lets one more call through after the restart.
DROP FUNCTION cellflow_rate_take(text, int, int, int, int);
--> statement-breakpoint
-- The next slot of a log (entries younger than the span, oldest first): after the newest
-- by the spacing, and once the limit-th newest has left the span.
CREATE FUNCTION cellflow_rate_slot(
  p_log bigint[], p_now_ms bigint, p_limit int, p_span_ms bigint, p_spacing_ms int
)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  n int := cardinality(p_log);
  slot bigint := p_now_ms;
BEGIN
  IF n > 0 THEN
    slot := greatest(slot, p_log[n] + p_spacing_ms);
  END IF;
  IF n >= p_limit THEN
    slot := greatest(slot, p_log[n - p_limit + 1] + p_span_ms);
  END IF;
  RETURN slot;
END $$;
--> statement-breakpoint
CREATE FUNCTION cellflow_rate_take(
  p_key text, p_limit int, p_window_ms int, p_spacing_ms int, p_guard_ms int, p_reach_ms int
)
RETURNS TABLE (granted boolean, wait_ms int, at_ms bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  log bigint[];
  now_ms bigint;
  span bigint := p_window_ms + p_guard_ms;
  slot bigint;
BEGIN
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT l.grants INTO log FROM rate_limit_logs l WHERE l.key = p_key;
  IF FOUND THEN
    now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    log := ARRAY(SELECT g FROM unnest(log) g WHERE g > now_ms - span ORDER BY g);
    slot := cellflow_rate_slot(log, now_ms, p_limit, span, p_spacing_ms);
    IF slot - now_ms > p_reach_ms THEN
      RETURN QUERY SELECT false, (slot - now_ms - p_reach_ms)::int, NULL::bigint;
      RETURN;
    END IF;
  END IF;
  SELECT l.grants INTO log FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limit_logs (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
    SELECT l.grants INTO log FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  END IF;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  log := ARRAY(SELECT g FROM unnest(log) g WHERE g > now_ms - span ORDER BY g);
  slot := cellflow_rate_slot(log, now_ms, p_limit, span, p_spacing_ms);
  IF slot - now_ms > p_reach_ms THEN
    -- Out of reach after all (entries committed since the read): nothing is written.
    RETURN QUERY SELECT false, (slot - now_ms - p_reach_ms)::int, NULL::bigint;
    RETURN;
  END IF;
  UPDATE rate_limit_logs l SET grants = log || slot WHERE l.key = p_key;
  RETURN QUERY SELECT true, (slot - now_ms)::int, slot;
END $$;
