/**
 * What an attempt is asked, what it holds while it runs, and how it ends: the vocabulary
 * shared by the attempt (attempt.ts) and its workflow work (workflow-attempt.ts). An end
 * is either a terminal write for the carrier to make with its next step (fenced like
 * every write of the attempt), a pause, a hand-back, or nothing to write.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import type { Group, TableSchema } from "@/contracts/table";
import type { LostReason } from "@/domain/statuses";
import type { PaidCalls } from "@/enrichments/types";
import type { LlmCalls } from "@/execution/llm-calls";
import type { Terminal } from "@/store/cells/finish";
import type { ClaimedCell } from "@/store/cells/row-step";
import type { CascadeStep } from "@/store/engine-reads";
import type { childLineage } from "./child-lineage";
import type { ProgressWriter } from "./progress";

export type AttemptEnd =
  | "completed"
  | "skipped"
  | "error"
  | "cancelled"
  | "interrupted"
  | "paused"
  | LostReason;

/**
 * One attempt's own request; everything shared (where it writes, the rate lines, the
 * definitions, the settings) is the engine handle's.
 */
export interface AttemptRequest {
  tableId: string;
  rowId: string;
  /** The cell the carrier's step claimed: its attempt number fences every write. */
  cell: ClaimedCell;
  /** The step's read of the row: its data, the workflows' stamps, the workspace's plan. */
  step: Pick<CascadeStep, "workflows" | "workspaceId" | "plan"> & {
    data: Record<string, unknown>;
  };
  schema: TableSchema;
  /** The cascade's stop: a shutdown, the row's deadline or the lost lock session. */
  cascadeSignal: AbortSignal;
  attemptTimeoutMs: number;
  /** The carrier's logger for the row. */
  log: Logger;
}

/**
 * How an attempt ended: with a terminal write for the carrier to make, interrupted by a
 * shutdown (the carrier hands the cell back to the queue), or with nothing to write.
 */
export type AttemptResult =
  | { kind: "write"; terminal: Terminal; end: "completed" | "skipped" | "error" }
  | { kind: "paused"; end: "paused"; resumeAt: number | undefined }
  | { kind: "interrupted"; end: "interrupted" }
  | { kind: "ended"; end: AttemptEnd };

export const ended = (end: AttemptEnd): AttemptResult => ({ kind: "ended", end });
export const write = (terminal: Terminal): AttemptResult => ({
  kind: "write",
  terminal,
  end:
    terminal.kind === "fail" ? "error" : terminal.outcome === "skipped" ? "skipped" : "completed",
});
export const failure = (
  message: string,
  blockErrors: Record<string, string> = {},
  details?: Record<string, unknown>,
): AttemptResult =>
  write({ kind: "fail", message, finish: { blockErrors, ...(details ? { details } : {}) } });

/**
 * What an attempt holds while it runs, set up by `openAttempt` and let go by
 * `closeAttempt`: its abort controller (registered for a Stop's notice), its deadline,
 * its progress writer and its paid-call gate. `secrets` and `lineage` are filled in as
 * the workflow starts: the error texts are redacted with the secrets, and children left
 * running are swept when it ends.
 */
export interface OpenAttempt {
  readonly db: Db;
  readonly log: Logger;
  readonly group: Group;
  readonly controller: AbortController;
  readonly progress: ProgressWriter;
  readonly paid: PaidCalls;
  /** The gate of its llm calls (workflow groups' llm blocks). */
  readonly llm: LlmCalls;
  secrets: Record<string, string>;
  lineage: ReturnType<typeof childLineage> | undefined;
  /** Lets go of the registration, the deadline, the listeners and the tombstone watch. */
  readonly release: {
    unregister(): void;
    timer: NodeJS.Timeout;
    onCascadeAbort(): void;
    unwatch?(): void;
  };
}

/** Every output column of the group blanked (null clears it in the row). */
export const blankOutputs = (group: Pick<Group, "outputs">): Record<string, null> =>
  Object.fromEntries(group.outputs.map((o) => [o.columnId, null]));
