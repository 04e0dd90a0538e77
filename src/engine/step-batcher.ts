/**
 * The process's carriers' steps, many per statement. A carrier's step (its last
 * attempt's terminal write, its next claim, its fresh read) waits here while up to
 * MAX_IN_FLIGHT statements are out, or until the end of the event-loop turn it was asked
 * in (engine/batcher.ts); whatever gathered meanwhile goes out as one statement
 * (store/cells/row-step.ts `rowSteps`): one round trip, one commit and one WAL flush for
 * all of them, where each used to cost its own.
 *
 * Invariants: each step keeps its own guards (the attempt fence, the queued guard of the
 * claim), so a step that lost its race loses only its own write; a batch has each row
 * at most once (a carrier steps only while it holds its row's lock, and steps one at a
 * time); a batch that fails as a whole (not a lost race: an error) is run again one step
 * at a time, so one bad step fails only its own carrier.
 */
import type { Db } from "@db/client";
import { isRetryableConflict } from "@db/sqlstate";
import { type RowStep, type RowStepInput, rowSteps } from "@/store/cells/row-step";
import { Batcher, fulfilled } from "./batcher";

/** Statements out at once: the rest of the steps gather for the next one (2 beat 4 in W1: bigger batches, fewer round trips). */
export const MAX_IN_FLIGHT = 2;
/** Steps per statement at most (the statement's parameter grows with it). */
export const MAX_BATCH = 64;

export class StepBatcher {
  private readonly batcher: Batcher<RowStepInput, RowStep>;

  constructor(db: Db, maxInFlight = MAX_IN_FLIGHT, maxBatch = MAX_BATCH) {
    this.batcher = new Batcher({ maxInFlight, maxBatch, run: (batch) => runSteps(db, batch) });
  }

  /** Statements sent and steps carried, for the benchmark's profile and tests. */
  get stats(): { statements: number; steps: number; largest: number } {
    const { statements, requests, largest } = this.batcher.stats;
    return { statements, steps: requests, largest };
  }

  step(input: RowStepInput): Promise<RowStep> {
    return this.batcher.submit(input);
  }
}

async function runSteps(
  db: Db,
  batch: readonly RowStepInput[],
): Promise<PromiseSettledResult<RowStep>[]> {
  try {
    return (await rowSteps(db, batch)).map(fulfilled);
  } catch (err) {
    if (batch.length === 1 || isRetryableConflict(err)) throw err;
    // Which step broke it is unknown: each runs alone, and only its own carrier fails.
    return Promise.allSettled(
      batch.map(async (input) => {
        const [r] = await rowSteps(db, [input]);
        if (!r) throw new Error("a row step returned no result");
        return r;
      }),
    );
  }
}
