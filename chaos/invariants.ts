/**
 * The checks every scenario ends with, over the audit of every cell transition
 * (`audit.ts`), the cells as they are now, and the calls the sink saw.
 *
 * - Every stamped cell ends terminal (or legitimately paused), and is terminal exactly
 *   once for the execution that ended it: nothing lost.
 * - Only legal transitions: under one execution id, `queued → running | error |
 *   cancelled`, `running → queued | completed | error | paused | cancelled`,
 *   `paused → running | queued | cancelled`; a terminal cell never moves again under the
 *   same id (a re-run stamps a new, higher id: `→ queued` with a new id is legal).
 * - Row order (when the groups form a chain): a row's cell is claimed only when every
 *   cell of an earlier group of that row is out of flight; otherwise it runs on inputs
 *   its predecessor has not written yet.
 * - Duplicate side effects: sink calls per `Idempotency-Key`. A repeat is explained when
 *   a fault overlaps the two calls (the earlier call landed before the system had
 *   recovered, the repeat after the fault began: the first attempt died after its call,
 *   before its checkpoint was written, and the re-driven attempt called again with the
 *   same key), and unexplained otherwise, which is an invariant break.
 */
import type { Transition } from "./audit";
import type { Arrival } from "./sink";

const TERMINAL = new Set(["completed", "error", "cancelled"]);
const LEGAL: Record<string, readonly string[]> = {
  queued: ["running", "error", "cancelled"],
  running: ["queued", "completed", "error", "paused", "cancelled"],
  paused: ["running", "queued", "cancelled"],
  completed: [],
  error: [],
  cancelled: [],
};

export interface IllegalTransition {
  rowId: string;
  groupId: string;
  from: string | null;
  to: string | null;
  oldExec: string | null;
  newExec: string | null;
  auditId: number;
}

export interface LostCell {
  rowId: string;
  groupId: string;
  status: string;
  executionId: string | null;
}

export interface OutOfOrderClaim {
  rowId: string;
  groupId: string;
  auditId: number;
  /** The earlier group and its status when this cell was claimed. */
  earlier: string;
}

export interface InvariantReport {
  expectedCells: number;
  stampedCells: number;
  terminalCells: number;
  pausedCells: number;
  /** Stamped cells that did not end terminal (or paused), and expected ones never stamped. */
  lost: number;
  lostSample: LostCell[];
  illegalTransitions: number;
  illegalSample: IllegalTransition[];
  /** Claims of a cell while an earlier group's cell of its row was queued or running. */
  outOfOrderClaims: number;
  outOfOrderSample: OutOfOrderClaim[];
  /** (cell, execution) pairs that became terminal more than once. */
  terminalMoreThanOnce: number;
  /** The audit and the cells table disagree on a cell's status now. */
  auditMismatches: number;
  /** running → queued: attempts handed back (crash re-drive or shutdown). */
  requeues: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  duplicates?: DuplicateReport;
}

export interface DuplicateReport {
  calls: number;
  keys: number;
  /** Keys called more than once, and the calls beyond the first. */
  duplicatedKeys: number;
  extraCalls: number;
  /** Repeats with a fault overlapping the two calls. */
  explainedByFault: number;
  unexplained: number;
  unexplainedSample: string[];
}

export interface CellNow {
  rowId: string;
  groupId: string;
  status: string;
  executionId: string;
  error: string | null;
}

function byCell(transitions: Transition[]): Map<string, Transition[]> {
  const cells = new Map<string, Transition[]>();
  for (const t of transitions) {
    const k = `${t.rowId}/${t.groupId}`;
    const list = cells.get(k);
    if (list) list.push(t);
    else cells.set(k, [t]);
  }
  return cells;
}

/** Whether `t` may follow a cell whose status and execution id were `status` and `exec`. */
function legal(t: Transition, status: string | null, exec: string | null): boolean {
  if (t.op === "insert") return status === null && t.newStatus === "queued";
  // Un-stamping (a credits halt) takes back only queued cells.
  if (t.op === "delete") return t.oldStatus === "queued";
  // A gap: a change the audit did not see.
  if (t.oldStatus !== status || t.oldExec !== exec) return false;
  if (t.newExec !== t.oldExec) {
    // A re-run: a new, later execution id, queued.
    const comparable = t.newExec?.startsWith("ex2_") && t.oldExec?.startsWith("ex2_");
    return t.newStatus === "queued" && !(comparable && (t.newExec ?? "") <= (t.oldExec ?? ""));
  }
  return (LEGAL[t.oldStatus ?? ""] ?? []).includes(t.newStatus ?? "");
}

export function checkTransitions(
  transitions: Transition[],
  now: CellNow[],
  expectedCells: number,
  groupOrder: readonly string[] = [],
): InvariantReport {
  const cells = byCell(transitions);
  const illegal: IllegalTransition[] = [];
  let requeues = 0;
  let terminalMoreThanOnce = 0;
  const finalOf = new Map<string, { status: string | null; exec: string | null }>();
  for (const [k, list] of cells) {
    const terminalTimes = new Map<string, number>();
    let status: string | null = null;
    let exec: string | null = null;
    for (const t of list) {
      if (!legal(t, status, exec)) {
        illegal.push({
          rowId: t.rowId,
          groupId: t.groupId,
          from: t.oldStatus,
          to: t.newStatus,
          oldExec: t.oldExec,
          newExec: t.newExec,
          auditId: t.id,
        });
      }
      if (t.oldStatus === "running" && t.newStatus === "queued") requeues++;
      if (t.newStatus && TERMINAL.has(t.newStatus) && t.newExec) {
        const n = (terminalTimes.get(t.newExec) ?? 0) + 1;
        terminalTimes.set(t.newExec, n);
        if (n === 2) terminalMoreThanOnce++;
      }
      status = t.op === "delete" ? null : t.newStatus;
      exec = t.op === "delete" ? null : t.newExec;
    }
    finalOf.set(k, { status, exec });
  }
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const lost: LostCell[] = [];
  let auditMismatches = 0;
  const seen = new Set<string>();
  for (const c of now) {
    const k = `${c.rowId}/${c.groupId}`;
    seen.add(k);
    statuses[c.status] = (statuses[c.status] ?? 0) + 1;
    if (c.status === "error") {
      const m = (c.error ?? "").slice(0, 120);
      errors[m] = (errors[m] ?? 0) + 1;
    }
    const f = finalOf.get(k);
    if (!f || f.status !== c.status || f.exec !== c.executionId) auditMismatches++;
    if (!TERMINAL.has(c.status) && c.status !== "paused")
      lost.push({
        rowId: c.rowId,
        groupId: c.groupId,
        status: c.status,
        executionId: c.executionId,
      });
  }
  for (const [k, f] of finalOf) {
    if (seen.has(k)) continue;
    const [rowId = "", groupId = ""] = k.split("/");
    lost.push({ rowId, groupId, status: f.status ?? "deleted", executionId: f.exec });
  }
  const order = checkRowOrder(transitions, groupOrder);
  return {
    expectedCells,
    stampedCells: cells.size,
    terminalCells: now.filter((c) => TERMINAL.has(c.status)).length,
    pausedCells: statuses.paused ?? 0,
    lost: lost.length + Math.max(0, expectedCells - cells.size),
    lostSample: lost.slice(0, 20),
    illegalTransitions: illegal.length,
    illegalSample: illegal.slice(0, 20),
    outOfOrderClaims: order.length,
    outOfOrderSample: order.slice(0, 20),
    terminalMoreThanOnce,
    auditMismatches,
    requeues,
    statuses,
    errors,
  };
}

/** Replays each row's transitions in commit order and finds claims that jumped the chain. */
function checkRowOrder(
  transitions: Transition[],
  groupOrder: readonly string[],
): OutOfOrderClaim[] {
  if (groupOrder.length < 2) return [];
  const rank = new Map(groupOrder.map((g, i) => [g, i]));
  const rows = new Map<string, Map<string, string | null>>();
  const out: OutOfOrderClaim[] = [];
  for (const t of transitions) {
    let row = rows.get(t.rowId);
    if (!row) {
      row = new Map();
      rows.set(t.rowId, row);
    }
    const mine = rank.get(t.groupId);
    if (t.oldStatus === "queued" && t.newStatus === "running" && mine !== undefined) {
      for (const [g, status] of row) {
        const theirs = rank.get(g);
        if (theirs !== undefined && theirs < mine && (status === "queued" || status === "running"))
          out.push({
            rowId: t.rowId,
            groupId: t.groupId,
            auditId: t.id,
            earlier: `${g} ${status}`,
          });
      }
    }
    row.set(t.groupId, t.op === "delete" ? null : t.newStatus);
  }
  return out;
}

/** A fault from when it struck until the system had recovered from it (wall clock, ms). */
export interface FaultWindow {
  start: number;
  end: number;
}

/**
 * Calls per Idempotency-Key among `arrivals` (only those with a key); a repeat is
 * explained when some fault window overlaps the span from the earlier call to the repeat.
 */
export function checkDuplicates(arrivals: Arrival[], faults: FaultWindow[]): DuplicateReport {
  const byKey = new Map<string, number[]>();
  let calls = 0;
  for (const a of arrivals) {
    if (!a.key) continue;
    calls++;
    const list = byKey.get(a.key);
    if (list) list.push(a.at);
    else byKey.set(a.key, [a.at]);
  }
  let duplicatedKeys = 0;
  let extraCalls = 0;
  let explained = 0;
  const unexplained: string[] = [];
  for (const [key, times] of byKey) {
    if (times.length < 2) continue;
    duplicatedKeys++;
    extraCalls += times.length - 1;
    times.sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      const before = times[i - 1] ?? 0;
      const after = times[i] ?? 0;
      if (faults.some((f) => f.start <= after && f.end >= before)) explained++;
      else unexplained.push(key);
    }
  }
  return {
    calls,
    keys: byKey.size,
    duplicatedKeys,
    extraCalls,
    explainedByFault: explained,
    unexplained: unexplained.length,
    unexplainedSample: unexplained.slice(0, 20),
  };
}

/** What breaks the run: each a sentence for the report. */
export function problemsOf(r: InvariantReport): string[] {
  const p: string[] = [];
  if (r.lost > 0) p.push(`${r.lost} cells lost (not terminal at the end, or never stamped)`);
  if (r.illegalTransitions > 0) p.push(`${r.illegalTransitions} illegal transitions`);
  if (r.outOfOrderClaims > 0)
    p.push(`${r.outOfOrderClaims} cells claimed while an earlier group of their row was in flight`);
  if (r.terminalMoreThanOnce > 0)
    p.push(`${r.terminalMoreThanOnce} cells terminal more than once under one execution id`);
  if (r.auditMismatches > 0) p.push(`${r.auditMismatches} cells disagree with their audit`);
  if (r.duplicates && r.duplicates.unexplained > 0)
    p.push(`${r.duplicates.unexplained} repeated side effects with no fault between them`);
  return p;
}
