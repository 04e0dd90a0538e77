/**
 * Watches a dispatch while faults land: progress (terminal cells), stranded cells and the
 * dispatch's status, sampled every `everyMs`. Stranded is what the re-drive exists for:
 * a `running` cell whose row lock nobody holds (its carrier died: the same exact test
 * the re-drive makes), or a handed-out row (at or before the dispatch's cursor) with
 * queued cells and no carrier holding its lock for longer than WAITING_MS (a carrier job
 * starts in milliseconds when the window fits the workers' concurrency). Time to heal
 * after a fault is how long until the last stranded cell was picked up again. A sample
 * that fails (Postgres is down) is recorded as such.
 */

import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { sleep } from "@/domain/sleep";

/** How long a handed-out row may wait for its carrier before it counts as stranded. */
export const WAITING_MS = 3_000;
/**
 * How long a running cell must be seen without its row lock to count as orphaned. One
 * sample can see it falsely: `cells` is read from the statement's snapshot but `pg_locks`
 * live, so a carrier that commits its cell's end and lets go of the lock while the sample
 * runs looks like a dead one. A carrier's lock outlives its cell's end by milliseconds;
 * a dead carrier's is gone until the re-drive.
 */
export const ORPHAN_CONFIRM_MS = 1_000;

/** The row lock's key (src/engine/row-lock.ts `rowLockKey`), computed in SQL. */
const lockKey = (tableId: string, rowId: string) =>
  sql.raw(
    `('x' || left(encode(sha256(convert_to('cascade:' || ${tableId} || ':' || ${rowId}, 'UTF8')), 'hex'), 16))::bit(64)::bigint`,
  );

export interface Sample {
  /** ms since the monitor started. */
  t: number;
  terminal: number;
  stranded: number;
  /** Of `stranded`: running cells without their row lock, and rows waiting too long. */
  orphans?: number;
  waiting?: number;
  status: string;
  down?: boolean;
}

export interface Heal {
  /** From the fault until no stranded cell was left (0: none was ever seen). */
  healMs: number;
  /** The most cells stranded at once after the fault. */
  peakStranded: number;
  /** From the fault until the database answered again (only when it did not). */
  dbDownMs?: number;
}

export class RunMonitor {
  readonly samples: Sample[] = [];
  readonly started = Date.now();
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** Since when each handed-out row without a carrier has been waiting (monitor clock). */
  private readonly waitingSince = new Map<string, number>();
  /** Since when each running cell (row:group:execution) has been seen without its row lock. */
  private readonly orphanSince = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly dispatchId: string,
  ) {}

  start(everyMs = 250): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.sample();
        await sleep(everyMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  last(): Sample | undefined {
    return this.samples.at(-1);
  }

  private async sample(): Promise<void> {
    const t = Date.now() - this.started;
    try {
      const [s] = await queryRows<{
        terminal: number;
        orphans: string[] | null;
        waiting: string[] | null;
        status: string;
      }>(
        this.db,
        sql`with held as (
              select (l.classid::bigint << 32) | l.objid::bigint as k
                from pg_locks l
               where l.locktype = 'advisory' and l.granted and l.objsubid = 1
                 and l.database = (select oid from pg_database where datname = current_database()))
            select (select count(*)::int from cells
                     where dispatch_id = ${this.dispatchId} and status in ('completed', 'error', 'cancelled')) as terminal,
                   (select array_agg(c.row_id || ':' || c.group_id || ':' || c.execution_id) from cells c
                     where c.dispatch_id = ${this.dispatchId} and c.status = 'running'
                       and not exists (select 1 from held where held.k = ${lockKey("c.table_id", "c.row_id")})) as orphans,
                   (select array_agg(distinct c.row_id) from cells c join dispatches d on d.id = c.dispatch_id
                     where c.dispatch_id = ${this.dispatchId} and c.status = 'queued' and c.row_position <= d."cursor"
                       and not exists (select 1 from held where held.k = ${lockKey("c.table_id", "c.row_id")})) as waiting,
                   (select status::text from dispatches where id = ${this.dispatchId}) as status`,
      );
      const waiting = new Set(s?.waiting ?? []);
      for (const row of this.waitingSince.keys())
        if (!waiting.has(row)) this.waitingSince.delete(row);
      for (const row of waiting) if (!this.waitingSince.has(row)) this.waitingSince.set(row, t);
      let stuck = 0;
      for (const since of this.waitingSince.values()) if (t - since > WAITING_MS) stuck++;
      const orphaned = new Set(s?.orphans ?? []);
      for (const cell of this.orphanSince.keys())
        if (!orphaned.has(cell)) this.orphanSince.delete(cell);
      for (const cell of orphaned) if (!this.orphanSince.has(cell)) this.orphanSince.set(cell, t);
      let orphans = 0;
      for (const since of this.orphanSince.values()) if (t - since >= ORPHAN_CONFIRM_MS) orphans++;
      this.samples.push({
        t,
        terminal: s?.terminal ?? 0,
        stranded: orphans + stuck,
        orphans,
        waiting: stuck,
        status: s?.status ?? "?",
      });
    } catch {
      const prev = this.last();
      this.samples.push({
        t,
        terminal: prev?.terminal ?? 0,
        stranded: prev?.stranded ?? 0,
        status: "?",
        down: true,
      });
    }
  }

  /** Resolves once `n` cells are terminal (or the dispatch ended, or the deadline passed). */
  async waitForTerminal(n: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = this.last();
      if (s && (s.terminal >= n || (s.status !== "active" && s.status !== "?"))) return true;
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
  }

  /** Resolves with the dispatch's end status, or "timeout". */
  async waitForEnd(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = this.last();
      if (s && s.status !== "active" && s.status !== "?") return s.status;
      if (Date.now() > deadline) return "timeout";
      await sleep(100);
    }
  }

  /** How a fault at `faultT` (monitor clock) healed, looking until `untilT`. */
  heal(faultT: number, untilT = Number.POSITIVE_INFINITY): Heal {
    const after = this.samples.filter((s) => s.t >= faultT && s.t < untilT);
    let lastStranded = -1;
    let peak = 0;
    let firstUp: number | undefined;
    let sawDown = false;
    for (const s of after) {
      if (s.down) {
        sawDown = true;
        continue;
      }
      if (sawDown && firstUp === undefined) firstUp = s.t;
      if (s.stranded > 0) lastStranded = s.t;
      peak = Math.max(peak, s.stranded);
    }
    // Healed at the first sample after the last stranded one.
    const healedAt =
      lastStranded < 0
        ? faultT
        : (after.find((s) => s.t > lastStranded && !s.down)?.t ?? lastStranded);
    return {
      healMs: Math.max(0, healedAt - faultT),
      peakStranded: peak,
      ...(sawDown && firstUp !== undefined ? { dbDownMs: firstUp - faultT } : {}),
    };
  }
}
