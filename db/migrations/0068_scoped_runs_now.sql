-- custom: the runs of these tables that have a large Stop's cancel scope, read with a fresh
-- snapshot (VOLATILE: each query sees what committed before it). A step batch calls it once,
-- after its claims took the tables' scope locks (cellflow_scope_lock_shared), and tests
-- each candidate cell against cellflow_covered_now only when its run is in the answer:
-- a scope can commit only under the exclusive lock, which waits for this transaction, so
-- a run missing here gets no scope before the claim commits. Called per cell, the fresh
-- read was a tenth of the step statement's time in W1, where no run has a scope.
CREATE OR REPLACE FUNCTION cellflow_scoped_runs_now(t text[]) RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  ids text[];
BEGIN
  SELECT coalesce(array_agg(DISTINCT s.dispatch_id), '{}') INTO ids
    FROM cancel_scopes s WHERE s.table_id = ANY (t);
  RETURN ids;
END $$;
