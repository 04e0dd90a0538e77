/**
 * The engine model's judge: pure functions over a table's audited history in commit
 * order (see model-audit.ts) and the Stops the schedule made. Each check names the
 * invariant it enforces (docs/engine-invariants.md); each returns plain-word findings,
 * empty when the history keeps it. Unit-tested on made-up histories (test/unit).
 */

export interface AuditRecord {
  id: number;
  /** The writing transaction: records of one transaction are applied together. */
  txn: string;
  /** Commit time, microseconds since the epoch (server clock). */
  committed: number;
  kind: "cell" | "dispatch" | "row";
  op: "insert" | "update" | "delete";
  rowId: string | null;
  groupId: string | null;
  rowPosition: number | null;
  status: string | null;
  executionId: string | null;
  attempt: number | null;
  dispatchId: string | null;
  cursor: number | null;
  window: number | null;
  stamping: boolean | null;
  /** A cell's outcome, and whether its answer came from the result cache (`details.cached`). */
  outcome?: string | null;
  cached?: boolean | null;
  /** A row record's value of the column the run condition reads (JSON null: absent). */
  value?: unknown;
  /**
   * A cell record's snapshot, taken in its transaction (`xmin:xmax:xip,…`, as
   * `pg_current_snapshot()` prints it): the transactions it does not see were still in
   * progress then, whatever their commit time says.
   */
  snapshot?: string | null;
}

export interface StopScope {
  rowIds?: string[];
  groupIds?: string[];
  dispatchId?: string;
}

/** A Stop the schedule made: called at `t0`, returned at `t1` (server clock, µs). */
export interface StopMade {
  scope: StopScope;
  t0: number;
  t1: number;
}

export interface History {
  records: AuditRecord[];
  stops: StopMade[];
  /** Each group's upstream: itself and every group it reads from (a Stop of any holds it). */
  upstream: Record<string, string[]>;
  /** Each run's groups (a Stop of a run holds its groups' auto-run on its rows). */
  runGroups: Record<string, string[]>;
  /**
   * When the schedule knew each run existed (server clock, µs): its request had created
   * it. A run predates a Stop only if it was known before the Stop began; a commit
   * timestamp is not enough (a commit becomes visible a little after its timestamp).
   */
  runKnown: Record<string, number>;
}

interface Cell {
  status: string;
  executionId: string;
  attempt: number;
  dispatchId: string | null;
  position: number;
}

interface Origin {
  dispatchId: string | null;
  committed: number;
  rowId: string;
}

const inFlight = (s: string | null | undefined) => s === "queued" || s === "running";
const key = (r: AuditRecord) => `${r.rowId}/${r.groupId}`;

/** Records grouped by transaction, in commit order. */
function transactions(records: AuditRecord[]): AuditRecord[][] {
  const out: AuditRecord[][] = [];
  for (const r of records) {
    const last = out.at(-1);
    if (last && last[0]?.txn === r.txn) last.push(r);
    else out.push([r]);
  }
  return out;
}

/** Where each execution came from: the run that stamped it (null: a carrier's auto-run). */
function origins(records: AuditRecord[]): Map<string, Origin> {
  const out = new Map<string, Origin>();
  for (const r of records) {
    if (r.kind !== "cell" || !r.executionId || out.has(r.executionId) || r.status !== "queued")
      continue;
    out.set(r.executionId, {
      dispatchId: r.dispatchId,
      committed: r.committed,
      rowId: r.rowId ?? "",
    });
  }
  return out;
}

/**
 * I1: after a Stop returns, nothing in its scope is or becomes queued or running without
 * a new run request. A queued or running record committed after the Stop returned is a
 * finding when its execution is in the Stop's scope and was not started by a request
 * made after the Stop began: its own run, or, for a carrier's auto-run, a run that
 * stamped a cell of the row before the auto-run's stamp. A run counts as made after the
 * Stop only if the schedule did not know it before the Stop began: a run made before it
 * lifts nothing, however late its pages stamp the row (issue 29, item 2).
 */
export function checkStopHolds(h: History): string[] {
  const found: string[] = [];
  const origin = origins(h.records);
  const created = new Map<string, number>();
  /** Per row, each stamp of a run on it: when it committed and when its run was known. */
  const news = new Map<string, { committed: number; known: number }[]>();
  const rowRuns = new Map<string, Set<string>>();
  for (const r of h.records) {
    if (r.kind === "dispatch" && r.op === "insert" && r.dispatchId)
      created.set(r.dispatchId, r.committed);
    if (r.kind === "cell" && r.rowId && r.dispatchId) {
      const runs = rowRuns.get(r.rowId) ?? new Set<string>();
      runs.add(r.dispatchId);
      rowRuns.set(r.rowId, runs);
    }
  }
  const known = (dispatchId: string) => h.runKnown[dispatchId] ?? created.get(dispatchId) ?? 0;
  for (const [, o] of origin)
    if (o.dispatchId)
      news.set(o.rowId, [
        ...(news.get(o.rowId) ?? []),
        { committed: o.committed, known: known(o.dispatchId) },
      ]);
  for (const r of h.records) {
    if (r.kind !== "cell" || !inFlight(r.status) || !r.executionId || !r.rowId || !r.groupId)
      continue;
    const x = origin.get(r.executionId);
    if (!x) continue;
    for (const s of h.stops) {
      if (r.committed <= s.t1) continue;
      if (s.scope.rowIds && !s.scope.rowIds.includes(r.rowId)) continue;
      if (x.dispatchId !== null) {
        if (s.scope.groupIds && !s.scope.groupIds.includes(r.groupId)) continue;
        if (s.scope.dispatchId && x.dispatchId !== s.scope.dispatchId) continue;
        if (known(x.dispatchId) > s.t0) continue;
        found.push(
          `I1: ${r.rowId}/${r.groupId} ${r.status} after a Stop with an execution of run ${x.dispatchId}, which predates the Stop`,
        );
        continue;
      }
      const held =
        s.scope.groupIds ?? (s.scope.dispatchId ? h.runGroups[s.scope.dispatchId] : null);
      const upstream = h.upstream[r.groupId] ?? [r.groupId];
      if (held && !upstream.some((g) => held.includes(g))) continue;
      if (s.scope.dispatchId && !rowRuns.get(r.rowId)?.has(s.scope.dispatchId)) continue;
      const newer = (news.get(r.rowId) ?? []).some(
        (n) => n.known > s.t0 && n.committed <= x.committed,
      );
      if (newer) continue;
      found.push(
        `I1: ${r.rowId}/${r.groupId} ${r.status} after a Stop through an auto-run with no run request made after the Stop on the row`,
      );
    }
  }
  return found;
}

/**
 * Replays the history transaction by transaction and checks, after each commit:
 * I2, a run's in-flight rows (handed out: at or before its cursor, with a queued or
 * running cell of it) never exceed its window; I4, a run is `completed` only when its
 * stamping is done and none of its cells is queued or running.
 */
export function checkWindowsAndCompletion(h: History): string[] {
  const found: string[] = [];
  const cells = new Map<string, Cell>();
  const runs = new Map<
    string,
    { cursor: number; window: number; stamping: boolean; status: string }
  >();
  for (const txn of transactions(h.records)) {
    const touched = new Set<string>();
    const completed = new Set<string>();
    for (const r of txn) {
      if (r.kind === "dispatch" && r.dispatchId) {
        const before = runs.get(r.dispatchId);
        runs.set(r.dispatchId, {
          cursor: r.cursor ?? -1,
          window: r.window ?? 0,
          stamping: r.stamping ?? false,
          status: r.status ?? "active",
        });
        touched.add(r.dispatchId);
        if (r.status === "completed" && before?.status !== "completed") completed.add(r.dispatchId);
        continue;
      }
      const k = key(r);
      const was = cells.get(k);
      if (was?.dispatchId) touched.add(was.dispatchId);
      if (r.op === "delete") cells.delete(k);
      else
        cells.set(k, {
          status: r.status ?? "",
          executionId: r.executionId ?? "",
          attempt: r.attempt ?? 0,
          dispatchId: r.dispatchId,
          position: r.rowPosition ?? 0,
        });
      if (r.dispatchId) touched.add(r.dispatchId);
    }
    for (const id of touched) {
      const run = runs.get(id);
      if (!run) continue;
      const rows = new Set<number>();
      let open = 0;
      for (const c of cells.values()) {
        if (c.dispatchId !== id || !inFlight(c.status)) continue;
        open++;
        if (c.position <= run.cursor) rows.add(c.position);
      }
      if (rows.size > run.window)
        found.push(`I2: run ${id} had ${rows.size} rows in flight, window ${run.window}`);
      if (completed.has(id) && (run.stamping || open > 0))
        found.push(
          `I4: run ${id} completed with ${run.stamping ? "stamping not done" : `${open} cells in flight`}`,
        );
    }
  }
  return found;
}

/**
 * I3: each attempt ends at most once, and no write of a superseded attempt lands: on a
 * cell, an execution id once replaced never comes back, attempt numbers never go down
 * within an execution, and (execution, attempt) leaves `running` at most once.
 */
export function checkAttempts(h: History): string[] {
  const found: string[] = [];
  const cells = new Map<string, { seen: Set<string>; current: Cell }>();
  const ended = new Set<string>();
  for (const r of h.records) {
    if (r.kind !== "cell") continue;
    const k = key(r);
    const was = cells.get(k);
    if (r.op === "delete") {
      cells.delete(k);
      continue;
    }
    const exec = r.executionId ?? "";
    const attempt = r.attempt ?? 0;
    if (was && was.current.executionId !== exec && was.seen.has(exec))
      found.push(`I3: ${k} went back to execution ${exec}`);
    if (was && was.current.executionId === exec && attempt < was.current.attempt)
      found.push(`I3: ${k} went back from attempt ${was.current.attempt} to ${attempt}`);
    if (
      was?.current.status === "running" &&
      was.current.executionId === exec &&
      r.status !== "running"
    ) {
      const end = `${exec}#${attempt}`;
      if (r.status !== "queued" && r.status !== "cancelled") {
        if (ended.has(end)) found.push(`I3: ${k} attempt ${end} ended twice`);
        ended.add(end);
      }
    }
    const seen = was?.seen ?? new Set<string>();
    seen.add(exec);
    cells.set(k, {
      seen,
      current: {
        status: r.status ?? "",
        executionId: exec,
        attempt,
        dispatchId: r.dispatchId,
        position: r.rowPosition ?? 0,
      },
    });
  }
  return found;
}

/**
 * I5: once the schedule's work is drained, no cell is lost: every cell is completed,
 * error, cancelled or paused, and no run is left active.
 */
export function checkNothingLost(
  finalCells: { rowId: string; groupId: string; status: string }[],
  finalRuns: { id: string; status: string }[],
): string[] {
  const found: string[] = [];
  for (const c of finalCells)
    if (inFlight(c.status)) found.push(`I5: ${c.rowId}/${c.groupId} left ${c.status}`);
  for (const d of finalRuns) if (d.status === "active") found.push(`I5: run ${d.id} left active`);
  return found;
}

export function judge(
  h: History,
  finalCells: { rowId: string; groupId: string; status: string }[],
  finalRuns: { id: string; status: string }[],
): string[] {
  return [
    ...checkStopHolds(h),
    ...checkWindowsAndCompletion(h),
    ...checkAttempts(h),
    ...checkNothingLost(finalCells, finalRuns),
  ];
}

/** What the where compiler counts as empty: absent, null, "", [] or {}. */
function emptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === "object" && Object.keys(v).length === 0;
}

/**
 * Whether `txn` had ended (become visible) when `snapshot` was taken: below its xmin, or
 * below its xmax and not among those it lists in progress.
 */
export function visibleIn(snapshot: string, txn: string): boolean {
  const [xmin = "0", xmax = "0", xip = ""] = snapshot.split(":");
  const x = BigInt(txn);
  if (x < BigInt(xmin)) return true;
  if (x >= BigInt(xmax)) return false;
  return !xip
    .split(",")
    .filter((v) => v !== "")
    .some((v) => BigInt(v) === x);
}

/**
 * Run conditions (the group's `runIf`: `column` not empty): a cell of `groupId` ends
 * `condition_not_met` only if the group has the condition and the row's `column` may have
 * been empty on the snapshot of the judging statement, which the carrier sends after its
 * claim committed and before the cell's end. So the column was empty at some committed
 * moment between the claim and the end, or its value at the claim came from writes the
 * claim's transaction did not see yet (in progress in its snapshot): a synchronous commit
 * (an edit) takes its commit time before its WAL flush and becomes visible only after it,
 * while the claim, committed asynchronously, can become visible and be answered first. Then
 * the statement may read the value from before those writes. `records` is the history with
 * the row records (`auditedHistory(…, { rows: true })`).
 */
export function checkRunConditions(
  records: AuditRecord[],
  c: { groupId: string; column: string; runIf: boolean },
): string[] {
  const found: string[] = [];
  /** Each row's writes of the column, in commit order. */
  const writes = new Map<string, { txn: string; empty: boolean }[]>();
  /** Claims of the group under way (row/execution/attempt) → the column was empty since. */
  const sawEmpty = new Map<string, boolean>();
  const claimKey = (r: AuditRecord) => `${r.rowId}/${r.executionId}/${r.attempt}`;
  /** Whether the claim `r` may have read an empty column: walks back over what it did not see. */
  const emptyAtClaim = (r: AuditRecord): boolean => {
    const chain = writes.get(r.rowId ?? "") ?? [];
    for (const w of [...chain].reverse()) {
      if (w.empty) return true;
      // A row's writes are serialized by its lock: once one was visible, all before it were.
      if (!r.snapshot || w.txn === r.txn || visibleIn(r.snapshot, w.txn)) return false;
    }
    return true;
  };
  for (const tx of transactions(records)) {
    for (const r of tx) {
      if (r.kind !== "row" || !r.rowId) continue;
      const isEmpty = emptyValue(r.value);
      const chain = writes.get(r.rowId) ?? [];
      chain.push({ txn: r.txn, empty: isEmpty });
      writes.set(r.rowId, chain);
      if (isEmpty)
        for (const key of sawEmpty.keys())
          if (key.startsWith(`${r.rowId}/`)) sawEmpty.set(key, true);
    }
    for (const r of tx) {
      if (r.kind !== "cell" || r.groupId !== c.groupId) continue;
      if (r.status === "running") sawEmpty.set(claimKey(r), emptyAtClaim(r));
      if (r.status !== "completed" || r.outcome !== "condition_not_met") continue;
      if (!c.runIf) {
        found.push(`runIf: ${key(r)} ended condition_not_met, but the group has no run condition`);
        continue;
      }
      const seen = sawEmpty.get(claimKey(r));
      if (seen === undefined)
        found.push(`runIf: ${key(r)} ended condition_not_met without a claim of that attempt`);
      else if (!seen)
        found.push(
          `runIf: ${key(r)} ended condition_not_met, but ${c.column} was never empty since its claim`,
        );
    }
  }
  return found;
}
