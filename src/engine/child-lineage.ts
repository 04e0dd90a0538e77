/**
 * An attempt's record of its child runs (sub-workflow calls and foreach items; table
 * child_runs) and of the steps its execution finished inside them (table execution_steps:
 * blocks of child runs at any depth, and foreach items that ended `ok`). Invariants: a
 * child or a step is recorded only while the attempt holds the cell (a refused write
 * means the attempt lost it, and the attempt is aborted); what is recorded is redacted
 * like every output the attempt keeps; a failed write of a child's end never fails the
 * work it describes (it is logged), a failed write of a step does (the step would run
 * again); children the attempt leaves running end `cancelled` — its own when it ends, an
 * earlier attempt's when it starts.
 *
 * Reuse: the attempt reads the records of its execution and of the executions it resumes
 * (`records.chain`, newest first), one run at a time and only for runs that have some
 * (`records.scopes`, and the runs this attempt recorded in), the newest record of each
 * step winning. An earlier execution's record of a step that held failed foreach items is
 * not reused: the resume runs it again (its finished parts reused in turn).
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import type { ChildLedger, StepRecord, StepWrite } from "@/execution/blocks/types";
import { redact, redactText } from "@/security/redact";
import type { CellAttemptRef } from "@/store/cells/transition";
import { finishChildRun, sweepChildRuns } from "@/store/child-runs/finish";
import { startChildRun } from "@/store/child-runs/start";
import type { ExecutionRecords } from "@/store/execution-steps/read";
import { readSteps } from "@/store/execution-steps/read";
import { recordStep } from "@/store/execution-steps/record";

/** The attempt whose children are recorded. */
type LineageRef = CellAttemptRef;

export function childLineage(
  db: Db,
  ref: LineageRef,
  opts: {
    /** The secrets to redact from outputs and errors (known once the attempt loaded them). */
    secrets: () => Record<string, string>;
    onLost: () => void;
    log: Logger;
    /** What the execution (and those it resumes) recorded, as the attempt found it. */
    records: Pick<ExecutionRecords, "chain" | "scopes">;
  },
): ChildLedger & { open(): number } {
  let open = 0;
  const known = new Set(opts.records.scopes);
  const write = async (step: StepWrite, childId?: string): Promise<boolean> => {
    const output = redact(step.record.output, opts.secrets());
    const held = await recordStep(
      db,
      ref,
      { ...step.record, output, scope: step.scope, key: step.key },
      childId,
      step.charges,
    );
    if (held) known.add(step.scope);
    else opts.onLost();
    return held;
  };
  return {
    open: () => open,
    async started(child) {
      open += 1;
      const held = await startChildRun(db, {
        ...child,
        itemIndex: child.index,
        executionId: ref.executionId,
        attempt: ref.attempt,
        rowId: ref.rowId,
        groupId: ref.groupId,
      });
      if (!held) opts.onLost();
    },
    async ended(id, end) {
      open -= 1;
      const secrets = opts.secrets();
      const redacted =
        end.status === "completed"
          ? { status: end.status, output: redact(end.output, secrets) }
          : end.status === "error"
            ? { status: end.status, error: redactText(end.error, secrets) }
            : end;
      await finishChildRun(
        db,
        { id, executionId: ref.executionId, attempt: ref.attempt },
        redacted,
      ).catch((err: unknown) =>
        opts.log.warn({ err, childRunId: id }, "a child run's end could not be recorded"),
      );
    },
    async recorded(scope) {
      const out = new Map<string, StepRecord>();
      if (!known.has(scope)) return out;
      for (const r of await readSteps(db, opts.records.chain, scope)) {
        if (r.retryOnResume && r.executionId !== ref.executionId) continue;
        out.set(r.key, {
          digest: r.digest,
          output: r.output,
          taken: r.taken,
          retryOnResume: r.retryOnResume,
        });
      }
      return out;
    },
    async record(step) {
      await write(step);
    },
    async itemDone(childId, step) {
      // A child whose end was not written stays open: the attempt's end sweeps it.
      if (await write(step, childId)) open -= 1;
    },
  };
}

/** Closes the children an attempt left running (see the header); never throws. */
export async function sweepLeftChildren(
  db: Db,
  ref: Pick<LineageRef, "executionId" | "attempt">,
  scope: "this" | "before",
  log: Logger,
): Promise<void> {
  await sweepChildRuns(db, { ...ref, scope }).catch((err: unknown) =>
    log.warn({ err }, "child runs left running could not be closed"),
  );
}
