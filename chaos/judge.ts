/**
 * The end of a chain-workload run: the shared invariants, plus what only this workload
 * can tell (each cell's output is computable from its row, each completed chain cell must
 * have made its call), and the money judge over its paid groups, with the evidence for
 * every suspect cell: its transitions from the audit and the sink calls made under its
 * execution id, so a finding can be traced.
 */
import type { Db } from "@db/client";
import { type Transition, transitionsOf } from "./audit";
import {
  checkDuplicates,
  checkTransitions,
  type FaultWindow,
  type InvariantReport,
  problemsOf,
} from "./invariants";
import { readMoney } from "./ledger-read";
import { judgeMoney, type MoneyReport, moneyProblems } from "./money";
import { COMPANY_PATH, companyKind, providerLog } from "./provider";
import type { Arrival, Sink } from "./sink";
import {
  CHAIN_GROUPS,
  cellsNow,
  GROUPS,
  PAID,
  type WrongOutput,
  wrongChainOutputs,
  wrongPaidOutputs,
} from "./workload";

export interface Evidence {
  rowId: string;
  groupId: string;
  executionId: string;
  /** `<audit id> <time> <from>→<to> <exec> attempt <n>` per transition. */
  transitions: string[];
  /** Sink arrivals whose key starts with the execution id. */
  calls: { key: string | undefined; at: string }[];
  /** A paid cell's: the provider's answers for its input, `<time> <kind>`. */
  answers?: string[];
}

export interface ChainVerdict {
  invariants: InvariantReport;
  transitions: Transition[];
  wrongOutputs: (WrongOutput & { evidence: Evidence })[];
  /** Each out-of-order claim's row: both cells' transitions. */
  outOfOrderEvidence: Evidence[];
  /** Completed cells whose execution never called the sink (a checkpoint from nowhere?). */
  completedWithoutCall: number;
  completedWithoutCallSample: Evidence[];
  money: MoneyReport;
  /** Each money finding's cell (the first 10): its transitions, its provider's answers. */
  moneyEvidence: Evidence[];
  problems: string[];
}

const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);

function evidenceOf(
  transitions: Transition[],
  arrivals: Arrival[],
  cell: { rowId: string; groupId: string; executionId: string },
): Evidence {
  return {
    rowId: cell.rowId,
    groupId: cell.groupId,
    executionId: cell.executionId,
    transitions: transitions
      .filter((t) => t.rowId === cell.rowId && t.groupId === cell.groupId)
      .map(
        (t) =>
          `${t.id} ${iso(t.at)} ${t.oldStatus ?? t.op}→${t.newStatus ?? t.op} ${t.newExec ?? t.oldExec} attempt ${t.attempt}`,
      ),
    calls: arrivals
      .filter((a) => a.key?.startsWith(`${cell.executionId}:`))
      .map((a) => ({ key: a.key, at: iso(a.at) })),
  };
}

export async function judgeChain(
  db: Db,
  run: { tableId: string; workspaceId: string },
  expectedCells: number,
  sink: Sink,
  faults: FaultWindow[],
): Promise<ChainVerdict> {
  const { tableId } = run;
  const arrivals = sink.arrivals;
  const transitions = await transitionsOf(db, tableId);
  const now = await cellsNow(db, tableId);
  const invariants = checkTransitions(transitions, now, expectedCells, GROUPS);
  invariants.duplicates = checkDuplicates(arrivals, faults);
  const wrong = [
    ...(await wrongChainOutputs(db, tableId)),
    ...(await wrongPaidOutputs(db, tableId)),
  ];
  const called = new Set(arrivals.map((a) => a.key));
  const chained = new Set<string>(CHAIN_GROUPS);
  const silent = now.filter(
    (c) =>
      c.status === "completed" && chained.has(c.groupId) && !called.has(`${c.executionId}:call`),
  );
  const read = await readMoney(db, { ...run, paid: PAID, transitions });
  const answers = providerLog(sink, COMPANY_PATH, (q) => q.get("domain") ?? "");
  const money = judgeMoney({ ...read, answers, expected: companyKind });
  const inputOf = new Map(read.cells.map((c) => [`${c.rowId}/${c.groupId}`, c.input]));
  const problems = [...problemsOf(invariants), ...moneyProblems(money)];
  if (wrong.length > 0) problems.push(`${wrong.length} completed cells hold a wrong output`);
  if (silent.length > 0)
    problems.push(`${silent.length} completed cells never made their call to the sink`);
  return {
    invariants,
    transitions,
    wrongOutputs: wrong.slice(0, 10).map((w) => ({
      ...w,
      evidence: evidenceOf(transitions, arrivals, w),
    })),
    outOfOrderEvidence: invariants.outOfOrderSample
      .slice(0, 5)
      .flatMap((o) =>
        now.filter((c) => c.rowId === o.rowId).map((c) => evidenceOf(transitions, arrivals, c)),
      ),
    completedWithoutCall: silent.length,
    completedWithoutCallSample: silent
      .slice(0, 10)
      .map((c) => evidenceOf(transitions, arrivals, c)),
    money,
    moneyEvidence: money.sample
      .filter((f) => f.rowId !== null && f.groupId !== null)
      .slice(0, 10)
      .map((f) => {
        const input = inputOf.get(`${f.rowId}/${f.groupId}`);
        return {
          ...evidenceOf(transitions, arrivals, {
            rowId: f.rowId ?? "",
            groupId: f.groupId ?? "",
            executionId: f.executionId ?? "",
          }),
          answers: answers.filter((a) => a.input === input).map((a) => `${iso(a.at)} ${a.kind}`),
        };
      }),
    problems,
  };
}
