-- custom: a `where` Stop's rows move from one entry per row (stop_rows) to ranges of
-- positions (stop_ranges, see db/schema/stops.ts). The entries already recorded become one
-- range each, at their row's position (a deleted row has no cell left to cover).
INSERT INTO stop_ranges (seq, lo, hi)
SELECT sr.seq, r.position, r.position FROM stop_rows sr JOIN rows r ON r.id = sr.row_id
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- custom: whether position `pos` is among the rows `where` Stop `stop` matched: the range
-- that starts at or before it, read off the key's last such entry, reaches it. One probe
-- however many ranges the Stop has, and planned so whatever the statistics say: a plan made
-- while the table held a few ranges (a sort of a scan, cheapest then), kept by a prepared
-- statement, would read every range below each position after a Stop recorded 250,000.
CREATE OR REPLACE FUNCTION cellflow_in_stop(stop bigint, pos bigint) RETURNS boolean
LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off AS $$
  SELECT coalesce((SELECT sr.hi >= pos FROM stop_ranges sr
                    WHERE sr.seq = stop AND sr.lo <= pos ORDER BY sr.lo DESC LIMIT 1), false)
$$;
--> statement-breakpoint
-- custom: what a large Stop's cancel scope covers (see 0058), now reading the ranges.
CREATE OR REPLACE FUNCTION cellflow_covered(d text, r text, g text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT d IS NOT NULL AND EXISTS (
    SELECT 1 FROM cancel_scopes s
     WHERE s.dispatch_id = d
       AND (s.group_ids IS NULL OR g = ANY (s.group_ids))
       AND (s.row_ids IS NULL OR r = ANY (s.row_ids))
       AND (s.stop_seq IS NULL
            OR cellflow_in_stop(s.stop_seq, (SELECT p.position FROM rows p WHERE p.id = r))))
$$;
