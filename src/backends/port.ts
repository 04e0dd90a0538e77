/** The task backend port: what the engine needs from graphile-worker or trigger.dev. */
import { z } from "zod";

export const TASKS = { carrier: "row-carrier", stamper: "stamp-dispatch" } as const;

export interface CarrierPayload {
  tableId: string;
  rowId: string;
  /** The dispatch that handed this row out, if any; the carrier advances its window. */
  dispatchId?: string;
  /** A paused wait of this row that is due: the carrier resumes it first. */
  resumeWait?: { groupId: string; executionId: string };
}

export const CarrierPayloadSchema = z.object({
  tableId: z.string().min(1),
  rowId: z.string().min(1),
  dispatchId: z.string().min(1).optional(),
  resumeWait: z.object({ groupId: z.string().min(1), executionId: z.string().min(1) }).optional(),
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

export type EnqueueSpec = (
  | { task: typeof TASKS.carrier; payload: CarrierPayload }
  | { task: typeof TASKS.stamper; payload: StampPayload }
) & {
  /** Dedupes: a second enqueue with the same key while the first waits is a no-op. */
  idempotencyKey: string;
  concurrencyKey?: string;
  tags?: string[];
  delayMs?: number;
};

export interface TaskBackend {
  readonly kind: "local" | "trigger";
  /**
   * Carriers of one table the backend runs at once, where it caps them (trigger.dev's
   * per-key concurrency). A run's window is held to it: a row handed out beyond it only
   * waits for a slot, and one that waits past the re-drive's grace looks orphaned and gets
   * a second run — noise on the dashboard, and an API call each.
   */
  readonly tableConcurrency?: number;
  enqueue(specs: EnqueueSpec[]): Promise<void>;
  /**
   * Cancels the carrier runs a Stop found running. Correctness never depends on it (the
   * tombstone does); it stops the work promptly where the cancel NOTIFY cannot reach.
   */
  cancel(runIds: string[]): Promise<void>;
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
