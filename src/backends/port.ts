/** The task backend port: what the engine needs from graphile-worker or trigger.dev. */

export const TASKS = { carrier: "row-carrier" } as const;

export interface CarrierPayload {
  tableId: string;
  rowId: string;
  /** The dispatch that handed this row out, if any; the carrier advances its window. */
  dispatchId?: string;
}

export interface EnqueueSpec {
  task: (typeof TASKS)[keyof typeof TASKS];
  payload: CarrierPayload;
  /** Dedupes: a second enqueue with the same key while the first waits is a no-op. */
  idempotencyKey: string;
  concurrencyKey?: string;
  tags?: string[];
  delayMs?: number;
}

export interface TaskBackend {
  readonly kind: "local" | "trigger";
  enqueue(specs: EnqueueSpec[]): Promise<void>;
  close(): Promise<void>;
}

export interface TaskContext {
  runId: string;
  signal: AbortSignal;
}

export type TaskHandler = (payload: CarrierPayload, ctx: TaskContext) => Promise<void>;

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
