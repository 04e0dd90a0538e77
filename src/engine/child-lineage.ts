/**
 * An attempt's record of its child runs (sub-workflow calls and foreach items; table
 * child_runs). Invariants: a child is recorded only while the attempt holds the cell (a
 * refused start means the attempt lost it, and the attempt is aborted); what is recorded
 * is redacted like every output the attempt keeps; a failed write of an end never fails
 * the work it describes (it is logged); children the attempt leaves running end
 * `cancelled` — its own when it ends, an earlier attempt's when it starts.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import type { ChildLedger } from "@/execution/blocks/types";
import { redact, redactText } from "@/security/redact";
import type { CellAttemptRef } from "@/store/cells/transition";
import { finishChildRun, sweepChildRuns } from "@/store/child-runs/finish";
import { startChildRun } from "@/store/child-runs/start";

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
  },
): ChildLedger & { open(): number } {
  let open = 0;
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
