/**
 * `row-carrier`: one trigger.dev run drives one row (the engine's `runCarrier`, chain
 * off). Retries are off: the engine decides what runs again (the re-drive). The run's
 * `signal` (a cancel, or maxDuration) is the carrier's stop signal: the running cell goes
 * back to the queue unless a Stop made it `cancelled`. Per-table fairness: the
 * concurrency key is the table id, each table gets PER_TABLE carriers at most. Paid and
 * rate-limited calls refuse to run on the in-process limiter (the cell ends `error`).
 * A run clears its row's pending-carrier entry first (runCarrier, before reading the row):
 * until then, carriers enqueued for the row fold into it (src/backends/trigger.ts).
 */
import { metadata, schemaTask } from "@trigger.dev/sdk";
import { CarrierPayloadSchema, TASKS } from "@/backends/port";
import { CARRIERS_PER_TABLE } from "@/backends/trigger";
import { runCarrier } from "@/engine/carrier";
import type { CarrierProgress } from "@/engine/handle";
import { planLimits } from "@/limits/plans";
import { flushTaskMetrics, taskEngine } from "./deps";

/**
 * Carriers per table at once (runs are triggered with `concurrencyKey: tableId`); the
 * backend holds every run's window to it.
 */
export const PER_TABLE = CARRIERS_PER_TABLE;
/** Carriers in the whole project at once: each pins one database connection. */
export const TOTAL = 200;

/** The longest cascade any plan allows, and a minute to hand the row back. */
const MAX_DURATION_S = Math.ceil(planLimits("unlimited").cascadeTimeoutMs / 1000) + 60;

/** The dashboard's view of the run: which row, which cell, how far. */
export function reportProgress(event: CarrierProgress): void {
  if (event.kind === "row") {
    metadata.set("tableId", event.tableId).set("rowId", event.rowId);
    return;
  }
  metadata.set("cell", {
    groupId: event.groupId,
    executionId: event.executionId,
    state: event.end ?? "running",
  });
  if (event.end) metadata.increment("attemptsEnded", 1);
}

export const rowCarrier = schemaTask({
  id: TASKS.carrier,
  schema: CarrierPayloadSchema,
  retry: { maxAttempts: 1 },
  maxDuration: MAX_DURATION_S,
  concurrency: { perKey: PER_TABLE, total: TOTAL },
  run: async (payload, { ctx, signal }) => {
    const carrier = { ...taskEngine().engine, progress: reportProgress };
    const outcome = await runCarrier(carrier, payload, { runId: ctx.run.id, signal });
    await flushTaskMetrics();
    return { outcome };
  },
});
