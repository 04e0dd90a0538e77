-- custom: what a row holds against its run's per-row budget: the milli-credits charged or
-- reserved (released entries are deleted) for the row's cells of the run, and for its
-- cells of no run (the cascade after a run's cell, a resumed cell) since the run was
-- created. VOLATILE and plpgsql on purpose: the reservation (store/usage/reserve.ts)
-- calls it only after it locked the run's row and the cell's, and a volatile function's
-- query takes a snapshot of its own, so it sees every reservation that committed before
-- those locks were granted (the statement's snapshot, taken before it waited, would not).
CREATE OR REPLACE FUNCTION cellflow_row_budget_spent(p_run text, p_row text, p_since timestamptz)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (SELECT coalesce(sum(u.milli), 0)::bigint FROM usage u
           WHERE u.dispatch_id = p_run AND u.row_id = p_row)
       + (SELECT coalesce(sum(u.milli), 0)::bigint FROM usage u
           WHERE u.dispatch_id IS NULL AND u.row_id = p_row AND u.created_at >= p_since);
END $$;
