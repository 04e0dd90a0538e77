/**
 * The process's carriers' steps, many per statement. A carrier's step (its last
 * attempt's terminal write, its next claim, its fresh read) waits here while up to
 * MAX_IN_FLIGHT statements are out; whatever gathered meanwhile goes out as one
 * statement (store/cells/row-step.ts `rowSteps`): one round trip, one commit and one WAL
 * flush for all of them, where each used to cost its own.
 *
 * Invariants: each step keeps its own guards (the attempt fence, the queued guard of the
 * claim), so a step that lost its race loses only its own write; a batch has each row
 * at most once (a carrier steps only while it holds its row's lock, and steps one at a
 * time); a batch that fails as a whole (not a lost race: an error) is run again one step
 * at a time, so one bad step fails only its own carrier.
 */
import type { Db } from "../../db/client";
import { isRetryableConflict } from "../../db/sqlstate";
import { type RowStep, type RowStepInput, rowSteps } from "../store/cells/row-step";

/** Statements out at once: the rest of the steps gather for the next one (2 beat 4 in W1: bigger batches, fewer round trips). */
export const MAX_IN_FLIGHT = 2;
/** Steps per statement at most (the statement's parameter grows with it). */
export const MAX_BATCH = 64;

interface Waiting {
  input: RowStepInput;
  resolve: (step: RowStep) => void;
  reject: (err: unknown) => void;
}

export class StepBatcher {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  /** Statements sent and steps carried, for the benchmark's profile and tests. */
  readonly stats = { statements: 0, steps: 0, largest: 0 };

  constructor(
    private readonly db: Db,
    private readonly maxInFlight = MAX_IN_FLIGHT,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  step(input: RowStepInput): Promise<RowStep> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.stats.statements++;
    this.stats.steps += batch.length;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    try {
      const results = await rowSteps(
        this.db,
        batch.map((w) => w.input),
      );
      batch.forEach((w, i) => {
        const r = results[i];
        if (r) w.resolve(r);
        else w.reject(new Error("a batched row step returned no result"));
      });
    } catch (err) {
      if (batch.length === 1 || isRetryableConflict(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      // Which step broke it is unknown: each runs alone, and only its own carrier fails.
      await Promise.all(
        batch.map(async (w) => {
          try {
            const [r] = await rowSteps(this.db, [w.input]);
            if (r) w.resolve(r);
            else w.reject(new Error("a row step returned no result"));
          } catch (e) {
            w.reject(e);
          }
        }),
      );
    }
  }
}

const batchers = new WeakMap<Db, StepBatcher>();

/** The step batcher of a connection pool (one per process per pool). */
export function stepBatcherOf(db: Db): StepBatcher {
  let b = batchers.get(db);
  if (!b) {
    b = new StepBatcher(db);
    batchers.set(db, b);
  }
  return b;
}
