-- custom: what a row holds against its per-row budget: the milli-credits charged or
-- reserved for it (released entries are deleted), in its run, or, for a cell that
-- belongs to no run, in that cell's own execution. VOLATILE and plpgsql on purpose: the
-- reservation (store/usage/reserve.ts) calls it only after it locked the run's row and
-- the cell's, and a volatile function's query takes a snapshot of its own, so it sees
-- every reservation that committed before those locks were granted (the statement's
-- snapshot, taken before it waited, would not).
CREATE OR REPLACE FUNCTION cellflow_row_budget_spent(p_dispatch text, p_row text, p_cell_execution text)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_dispatch IS NOT NULL THEN
    RETURN (SELECT coalesce(sum(u.milli), 0)::bigint FROM usage u
             WHERE u.dispatch_id = p_dispatch AND u.row_id = p_row);
  END IF;
  RETURN (SELECT coalesce(sum(u.milli), 0)::bigint FROM usage u
           WHERE u.dispatch_id IS NULL AND u.row_id = p_row AND u.cell_execution_id = p_cell_execution);
END $$;
