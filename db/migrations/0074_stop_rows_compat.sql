-- custom: `stop_rows` as the version before the ranges read it, for a process of that
-- version still running beside this one during a deploy: its reads name the same rows a
-- Stop's ranges cover; its writes (a `where` Stop of the old code) fail loudly instead of
-- recording rows no reader of this version sees. Nothing of this version reads it.
CREATE VIEW stop_rows AS
SELECT sr.seq, r.id AS row_id
  FROM stop_ranges sr
  JOIN stops s ON s.seq = sr.seq
  JOIN rows r ON r.table_id = s.table_id AND r.position BETWEEN sr.lo AND sr.hi;
