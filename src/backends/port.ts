/** The task backend port: what the engine needs from graphile-worker or trigger.dev. */
import type { Db } from "@db/client";
import { z } from "zod";
import type { Result } from "@/domain/result";

export const TASKS = {
  carrier: "row-carrier",
  stamper: "stamp-dispatch",
  rowIndexes: "row-indexes",
} as const;

export interface CarrierPayload {
  tableId: string;
  rowId: string;
  /** The dispatch that handed this row out, if any; the carrier advances its window. */
  dispatchId?: string;
  /** A paused wait of this row that is due: the carrier resumes it first. */
  resumeWait?: { groupId: string; executionId: string };
  /**
   * The trigger.dev backend's pending-carrier entry this run was triggered for: the run
   * clears it as it starts, so enqueues of the row stop folding into it.
   */
  pendingKey?: string;
}

export const CarrierPayloadSchema = z.object({
  tableId: z.string().min(1),
  rowId: z.string().min(1),
  dispatchId: z.string().min(1).optional(),
  resumeWait: z.object({ groupId: z.string().min(1), executionId: z.string().min(1) }).optional(),
  pendingKey: z.string().min(1).optional(),
}) satisfies z.ZodType<CarrierPayload>;

/** A large run's remaining stamping, done in the background page by page. */
export interface StampPayload {
  tableId: string;
  dispatchId: string;
}

export const StampPayloadSchema = z.object({
  tableId: z.string().min(1),
  dispatchId: z.string().min(1),
}) satisfies z.ZodType<StampPayload>;

/**
 * Build the recorded row indexes and drop the retired ones (services/row-indexes.ts); the
 * table that asked, for the logs. The local worker runs it at once; trigger.dev leaves it
 * to the every-minute maintenance task.
 */
export interface RowIndexesPayload {
  tableId: string;
}

export const RowIndexesPayloadSchema = z.object({
  tableId: z.string().min(1),
}) satisfies z.ZodType<RowIndexesPayload>;

export type EnqueueSpec = (
  | { task: typeof TASKS.carrier; payload: CarrierPayload }
  | { task: typeof TASKS.stamper; payload: StampPayload }
  | { task: typeof TASKS.rowIndexes; payload: RowIndexesPayload }
) & {
  /** Dedupes: a second enqueue with the same key while the first waits is a no-op. */
  idempotencyKey: string;
  concurrencyKey?: string;
  tags?: string[];
  delayMs?: number;
};

/** Why a run's cancel did not go through, and whether trying again can help. */
export interface CancelFailure {
  /** A 4xx other than 404/408/409/429: the same call would fail the same way. */
  permanent: boolean;
  /** The platform's Retry-After, when it sent one. */
  retryAfterMs?: number;
  message: string;
}

/** `gone`: the platform no longer has the run running (finished, or unknown): nothing to do. */
export type CancelOutcome = Result<"cancelled" | "gone", CancelFailure>;

export interface TaskBackend {
  readonly kind: "local" | "trigger";
  /**
   * Carriers of one table the backend runs at once, where it caps them (trigger.dev's
   * per-key concurrency). A run's window is held to it: a row handed out beyond it only
   * waits for a slot, and one that waits past the re-drive's grace looks orphaned and gets
   * a second run — noise on the dashboard, and an API call each.
   */
  readonly tableConcurrency?: number;
  /**
   * True where cancelling a run is a call to a remote service: a Stop then writes the runs
   * it found running to the cancel outbox, drained after its response. False where the
   * cancel NOTIFY reaches the attempts (the local worker).
   */
  readonly remoteCancel: boolean;
  enqueue(specs: EnqueueSpec[]): Promise<void>;
  /**
   * Where the jobs live in the engine's own database (the local worker): slides run
   * `dispatchId`'s window in the caller's transaction `tx` and enqueues the carrier
   * (`carrier(rowId)`) of each row it hands out, in one statement, so the jobs exist only
   * if `tx` commits and a worker sees them at that commit. Absent where the queue is
   * elsewhere (trigger.dev): the caller slides and enqueues after its commit.
   */
  launchWindowIn?(
    tx: Db,
    dispatchId: string,
    carrier: (rowId: string) => EnqueueSpec,
  ): Promise<{ rowIds: string[]; completed: boolean }>;
  /**
   * Cancels one carrier run, once, without retrying (the outbox drain retries). Correctness
   * never depends on it (the tombstone does); it ends a run the Stop covered entirely
   * where the cancel NOTIFY cannot reach (a run still carrying other cells is spared).
   */
  cancelRun(runId: string): Promise<CancelOutcome>;
  close(): Promise<void>;
}

export interface TaskContext {
  runId: string;
  signal: AbortSignal;
}

export type TaskHandler = (payload: CarrierPayload, ctx: TaskContext) => Promise<void>;
export type StampHandler = (payload: StampPayload, ctx: TaskContext) => Promise<void>;

export function stamperSpec(payload: StampPayload): EnqueueSpec {
  return {
    task: TASKS.stamper,
    payload,
    idempotencyKey: `stamp:${payload.dispatchId}`,
    concurrencyKey: payload.tableId,
    tags: [`table:${payload.tableId}`, `dispatch:${payload.dispatchId}`],
  };
}

export function carrierSpec(payload: CarrierPayload): EnqueueSpec {
  return {
    task: TASKS.carrier,
    payload,
    idempotencyKey: `carrier:${payload.tableId}:${payload.rowId}`,
    concurrencyKey: payload.tableId,
    tags: [
      `table:${payload.tableId}`,
      `row:${payload.rowId}`,
      ...(payload.dispatchId ? [`dispatch:${payload.dispatchId}`] : []),
    ],
  };
}
