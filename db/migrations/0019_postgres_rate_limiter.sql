CREATE TABLE "rate_limit_logs" (
	"key" text PRIMARY KEY NOT NULL,
	"grants" bigint[] DEFAULT '{}' NOT NULL
);
--> statement-breakpoint
-- One take of the Postgres rate limiter: the sliding log the Redis limiter runs as a Lua
-- script (src/limits/rate/sliding-log.ts explains the guard and the spacing), here under
-- the key's row lock, so every process on the database takes from one log.
-- Grants when fewer than p_limit grants are younger than window + guard and the newest
-- is at least p_spacing_ms old; else answers how long until both hold.
-- Invariants: the clock is read after the row lock is held, so the grants of one key are
-- stamped in the order they were made, by one clock (the database's); a take that cannot
-- get the lock within 2 s fails (the caller answers "unavailable", never "ok").
-- synchronous_commit is off for the take alone: a grant lost to a database crash only
-- lets one more call through after the restart, and a take then costs no WAL flush.
CREATE FUNCTION cellflow_rate_take(
  p_key text, p_limit int, p_window_ms int, p_spacing_ms int, p_guard_ms int
)
RETURNS TABLE (granted boolean, wait_ms int, at_ms bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  log bigint[];
  now_ms bigint;
  span bigint := p_window_ms + p_guard_ms;
  newest bigint;
  wait bigint := 0;
BEGIN
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT l.grants INTO log FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limit_logs (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
    SELECT l.grants INTO log FROM rate_limit_logs l WHERE l.key = p_key FOR UPDATE;
  END IF;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  log := ARRAY(SELECT g FROM unnest(log) g WHERE g > now_ms - span ORDER BY g);
  newest := log[cardinality(log)];
  IF newest IS NOT NULL AND newest + p_spacing_ms > now_ms THEN
    wait := newest + p_spacing_ms - now_ms;
  END IF;
  IF cardinality(log) >= p_limit THEN
    wait := greatest(wait, log[1] + span - now_ms);
  END IF;
  IF wait > 0 THEN
    RETURN QUERY SELECT false, wait::int, NULL::bigint;
    RETURN;
  END IF;
  UPDATE rate_limit_logs l SET grants = log || now_ms WHERE l.key = p_key;
  RETURN QUERY SELECT true, 0, now_ms;
END $$;
