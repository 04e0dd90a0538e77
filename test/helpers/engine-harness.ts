/**
 * Driving the engine's operations directly, without a worker: a task backend that keeps
 * what was enqueued (the test runs those jobs itself, when its interleaving says so), and
 * gates that hold a flow at a race point until the test releases it.
 */
import type { CancelOutcome, EnqueueSpec, TaskBackend, TaskContext } from "@/backends/port";
import type { Pause, RacePoint } from "@/engine/race-points";

/** The job queue as a list: enqueued specs wait here until the test takes them. */
export class RecordingBackend implements TaskBackend {
  readonly kind = "local" as const;
  readonly remoteCancel = false;
  readonly jobs: EnqueueSpec[] = [];
  readonly cancelled: string[] = [];
  async enqueue(specs: EnqueueSpec[]): Promise<void> {
    this.jobs.push(...specs);
  }
  async cancelRun(runId: string): Promise<CancelOutcome> {
    this.cancelled.push(runId);
    return { ok: true, value: "cancelled" };
  }
  async close(): Promise<void> {}
  /** Carrier jobs for a row enqueued so far. */
  carriersFor(rowId: string): number {
    return this.jobs.filter((j) => j.task === "row-carrier" && j.payload.rowId === rowId).length;
  }
  take(): EnqueueSpec[] {
    return this.jobs.splice(0, this.jobs.length);
  }
}

let runs = 0;
export function taskContext(signal: AbortSignal = new AbortController().signal): TaskContext {
  runs += 1;
  return { runId: `test_run_${runs}`, signal };
}

/**
 * Runs `act` the `nth` time (1-based) a flow reaches `point`, and waits for it before the
 * flow goes on: the flow is held there while `act` does what the interleaving needs.
 */
export function onPoint(point: RacePoint, nth: number, act: () => Promise<unknown>): Pause {
  let seen = 0;
  return async (p) => {
    if (p !== point) return;
    seen += 1;
    if (seen === nth) await act();
  };
}

/** Runs `act` every time a flow reaches `point`. */
export function everyPoint(point: RacePoint, act: (n: number) => Promise<unknown>): Pause {
  let seen = 0;
  return async (p) => {
    if (p !== point) return;
    seen += 1;
    await act(seen);
  };
}
