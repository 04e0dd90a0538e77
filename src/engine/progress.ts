/**
 * Live progress of one attempt, coalesced: a block that finishes within the flush delay
 * costs no write at all (fast workflows write only claim and terminal), a slow one shows
 * up as running within the delay. Every write is fenced by execution id; a rejected
 * write means the attempt lost authority, and `onRejected` aborts it.
 */
import type { Db } from "@db/client";
import type { LostReason } from "@/domain/statuses";
import { writeProgress } from "@/store/cells/progress";

export const PROGRESS_FLUSH_MS = 100;

export class ProgressWriter {
  private running = new Set<string>();
  private outputs: Record<string, unknown> = {};
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly cell: { rowId: string; groupId: string; executionId: string; attempt: number },
    private readonly onRejected: (reason: LostReason) => void,
    /**
     * A write that could not be made (the database went away). Progress is advisory: the
     * terminal write decides the cell, and a lost session aborts the attempt through the
     * row lock, so the failure is only reported, and the next change writes again.
     */
    private readonly onWriteFailed: (err: unknown) => void = () => {},
  ) {}

  blockStarted(blockId: string): void {
    this.running.add(blockId);
    this.touch();
  }

  blockFinished(blockId: string, outputs: Record<string, unknown>): void {
    this.running.delete(blockId);
    Object.assign(this.outputs, outputs);
    this.touch();
  }

  private touch(): void {
    this.dirty = true;
    if (!this.timer && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        // Never a rejected chain: nobody awaits it until close(), so a failed write would
        // be an unhandled rejection, which ends the process.
        this.chain = this.chain
          .then(() => this.flush())
          .catch((err: unknown) => {
            this.dirty = true;
            this.onWriteFailed(err);
          });
      }, PROGRESS_FLUSH_MS);
    }
  }

  private async flush(): Promise<void> {
    if (!this.dirty || this.closed) return;
    this.dirty = false;
    const outputs = Object.keys(this.outputs).length > 0 ? { ...this.outputs } : undefined;
    const written = await writeProgress(this.db, {
      rowId: this.cell.rowId,
      groupId: this.cell.groupId,
      executionId: this.cell.executionId,
      attempt: this.cell.attempt,
      progress: { runningBlockIds: [...this.running], blockErrors: {}, outputs },
    });
    if (!written.ok) this.onRejected(written.reason);
  }

  /** Stops writing; waits for a write in progress so the terminal write comes after it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain.catch(() => {});
  }
}
