-- custom: "row R may be finished" for the destinations' outbox. When a cell leaves
-- queued/running/paused, the transaction that ends it appends a mark; the drainer
-- (store/destinations/drain-marks.ts) reads marks after commit and sends the row when it
-- has no queued, running or paused cell left. The mark commits with the cell's end, so a
-- drainer that sees a mark also sees that end, and an end it does not see yet leaves a
-- mark it does not see yet either: two cells of a row ending in concurrent transactions
-- can never both be missed. Per-cell cost: the WHEN clause (no function call) on every
-- status update; on an end, one probe of a partial index, and nothing else when the table
-- has no enabled destination. The mark has no unique key, so an end never waits on
-- another transaction's mark.
CREATE OR REPLACE FUNCTION cellflow_mark_row_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM destinations WHERE table_id = NEW.table_id AND enabled) THEN
    INSERT INTO destination_marks (table_id, row_id, dispatch_id)
    VALUES (NEW.table_id, NEW.row_id, NEW.dispatch_id);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cells_mark_row_ended AFTER UPDATE OF status ON cells
FOR EACH ROW
WHEN (OLD.status IN ('queued', 'running', 'paused')
      AND NEW.status NOT IN ('queued', 'running', 'paused'))
EXECUTE FUNCTION cellflow_mark_row_ended();
