/**
 * Row locks held on a few shared sessions. A process's carriers hold their rows'
 * session advisory locks on LOCK_SESSIONS pinned connections instead of one each, and
 * write through the pool, so a worker's connections do not grow with its concurrency,
 * and a crashed worker still frees all its locks at once (they die with its sessions).
 *
 * Invariants:
 * - A row key is held by at most one carrier of this process. A session-level advisory
 *   lock is re-entrant within its session, so Postgres alone would grant a second
 *   carrier sharing the session the same row: the process map is checked (and the key
 *   reserved) before Postgres is asked, and the key leaves the map only once Postgres
 *   answered the unlock.
 * - A key is unlocked on the session that locked it.
 * - Lock and unlock requests that arrive while a session's statement is in flight, or in
 *   the same event-loop turn, go out together in its next statement: one round trip
 *   serves every carrier waiting.
 * - A session found lost (connection error, failed unlock, a heartbeat that misses a
 *   lock it should hold) aborts every carrier holding a lock on it and is destroyed,
 *   which frees whatever it still held; new locks go to a fresh session.
 * - The "more queued?" read of a release is in the unlock's statement: it reads after
 *   the carrier's last write, and a carrier that bailed on our lock before the unlock
 *   left a cell this read sees (its stamp committed before that carrier was enqueued).
 */
import { createHash } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { Database, Db, SessionClient } from "@db/client";
import { lockBatch } from "@/store/locks/batch";
import { heldLockKeys } from "@/store/locks/held";
import { atEndOfTurn } from "./batcher";

/** Pinned lock sessions per process: lock statements are tiny and batched. */
export const LOCK_SESSIONS = 2;
const HEARTBEAT_MS = 30_000;

type Op =
  | { kind: "lock"; key: string; done: (got: boolean) => void; fail: (err: Error) => void }
  | {
      kind: "unlock";
      key: string;
      rowId: string;
      done: (r: { unlocked: boolean; more: boolean }) => void;
      fail: (err: Error) => void;
    };
/** The heartbeat, queued like a batch so that no batch is in flight while it compares. */
type Check = { kind: "check"; done: () => void; fail: (err: Error) => void };

export class LockSession {
  /** Keys this session holds in Postgres (answered locks, not yet answered unlocks). */
  readonly held = new Set<string>();
  private readonly lostController = new AbortController();
  private client: SessionClient | undefined;
  private connecting: Promise<SessionClient> | undefined;
  private queue: (Op | Check)[] = [];
  private busy = false;
  private heartbeat: NodeJS.Timeout | undefined;
  /**
   * A drain at the end of this event-loop turn, as the batchers do (batcher.ts): the
   * carriers one answer released lock and unlock together, in one statement instead of the
   * first alone.
   */
  private readonly scheduleDrain = atEndOfTurn(() => void this.drain());
  /** Lock statements sent, for tests and profiles. */
  statements = 0;

  constructor(
    private readonly database: Database,
    private readonly onDead: (session: LockSession) => void,
  ) {
    // Every carrier holding a row on this session listens to it.
    setMaxListeners(0, this.lostController.signal);
  }

  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  lock(key: string): Promise<boolean> {
    return new Promise((done, fail) => this.submit({ kind: "lock", key, done, fail }));
  }

  unlock(key: string, rowId: string): Promise<{ unlocked: boolean; more: boolean }> {
    return new Promise((done, fail) => this.submit({ kind: "unlock", key, rowId, done, fail }));
  }

  /** Ends the session: its locks are freed with the connection. */
  close(err?: Error): void {
    if (!this.lostController.signal.aborted)
      this.lostController.abort(err ?? new Error("the row lock session was closed"));
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.client?.release(true);
    this.client = undefined;
    const pending = this.queue;
    this.queue = [];
    for (const op of pending) op.fail(err ?? new Error("the row lock session was closed"));
    this.onDead(this);
  }

  private submit(op: Op | Check): void {
    if (this.lost.aborted) {
      op.fail(new Error("the row lock session was lost"));
      return;
    }
    this.queue.push(op);
    this.scheduleDrain();
  }

  private async connect(): Promise<SessionClient> {
    if (this.client) return this.client;
    this.connecting ??= this.database.pool.connect().then((client) => {
      client.on("error", (err) => this.close(err));
      this.client = client;
      this.heartbeat = setInterval(() => {
        new Promise<void>((done, fail) => this.submit({ kind: "check", done, fail })).catch(
          () => {},
        );
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
      return client;
    });
    return this.connecting;
  }

  /** One statement for every request that waited; the next batch starts when it answers. */
  private async drain(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.queue.length > 0 && !this.lost.aborted) {
        const waiting = this.queue;
        this.queue = [];
        const batch = waiting.filter((op): op is Op => op.kind !== "check");
        const checks = waiting.filter((op): op is Check => op.kind === "check");
        try {
          const client = await this.connect();
          if (batch.length > 0) await this.send(client, batch);
          if (checks.length > 0) await this.check(client);
          for (const c of checks) c.done();
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err));
          for (const op of waiting) op.fail(e);
          this.close(e);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private async send(client: SessionClient, batch: Op[]): Promise<void> {
    this.statements++;
    const answers = await lockBatch(
      client,
      batch.map((op) =>
        op.kind === "lock"
          ? { op: "lock", key: op.key }
          : { op: "unlock", key: op.key, rowId: op.rowId },
      ),
    );
    batch.forEach((op, i) => {
      const answer = answers[i];
      if (!answer) return;
      if (op.kind === "lock") {
        if (answer.ok) this.held.add(op.key);
        op.done(answer.ok);
      } else {
        this.held.delete(op.key);
        op.done({ unlocked: answer.ok, more: answer.more });
      }
    });
  }

  /** A session that lost a lock it should hold (a reset behind our back) is lost as a whole. */
  private async check(client: SessionClient): Promise<void> {
    const inPostgres = await heldLockKeys(client);
    for (const key of this.held)
      if (!inPostgres.has(key)) throw new Error("a row lock of this session was lost");
  }
}

/** 64-bit key from SHA-256, stable across Postgres versions (unlike hashtext). */
export function rowLockKey(tableId: string, rowId: string): string {
  const digest = createHash("sha256").update(`cascade:${tableId}:${rowId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** The process's lock sessions over one database, and which carrier holds which key. */
export class LockHub {
  private readonly sessions: (LockSession | undefined)[];
  /**
   * Keys taken (or being taken) by a carrier of this process: where, and, once its holder
   * is letting go, the unlock in flight.
   */
  private readonly keys = new Map<string, { session: LockSession; releasing?: Promise<unknown> }>();
  /** Writes of lock holders: the pool on the direct endpoint (named statements work there). */
  readonly db: Db;

  constructor(
    private readonly database: Database,
    size = LOCK_SESSIONS,
  ) {
    this.sessions = Array.from({ length: size }, () => undefined);
    this.db = database.sessionDb;
  }

  /** The session a key goes to: fixed per key while the session lives. */
  private sessionFor(key: string): LockSession {
    const slot = Number(BigInt.asUintN(32, BigInt(key)) % BigInt(this.sessions.length));
    let session = this.sessions[slot];
    if (!session || session.lost.aborted) {
      const fresh: LockSession = new LockSession(this.database, (dead) => {
        if (this.sessions[slot] === dead) this.sessions[slot] = undefined;
      });
      this.sessions[slot] = fresh;
      session = fresh;
    }
    return session;
  }

  /**
   * Takes the key; null when a carrier (of this process or another) holds it. A holder of
   * this process that is already letting go is waited for instead: its unlock's "more
   * queued?" read may predate the stamp that brought this carrier (the read is taken
   * when Postgres runs the unlock, and the key leaves the map only when Node has the
   * answer), so leaving the row to it could leave the new cell to the re-drive.
   */
  async acquire(key: string): Promise<LockSession | null> {
    for (;;) {
      const held = this.keys.get(key);
      if (!held) break;
      if (!held.releasing) return null;
      await held.releasing.catch(() => {});
    }
    const session = this.sessionFor(key);
    this.keys.set(key, { session });
    try {
      if (await session.lock(key)) return session;
    } catch (err) {
      this.keys.delete(key);
      throw err;
    }
    this.keys.delete(key);
    return null;
  }

  /** Unlocks on the key's session; a lost session counts as more queued (hand the row on). */
  async release(
    key: string,
    session: LockSession,
    rowId: string,
  ): Promise<{ unlocked: boolean; more: boolean }> {
    const unlocking = session.unlock(key, rowId);
    const entry = this.keys.get(key);
    if (entry) entry.releasing = unlocking;
    try {
      return await unlocking;
    } catch {
      // The session is gone, and the lock with it.
      return { unlocked: false, more: true };
    } finally {
      if (this.keys.get(key) === entry) this.keys.delete(key);
    }
  }

  /** Lock statements the live sessions sent, for tests and profiles. */
  get statements(): number {
    return this.sessions.reduce((n, s) => n + (s?.statements ?? 0), 0);
  }

  close(): void {
    for (const s of this.sessions) s?.close();
  }
}

/**
 * A lock hub over `database`, closed with it: its sessions are checked out of the
 * database's pool for good, and a pool does not end while a client is out, so whoever
 * closes the database closes them first. One per engine handle (handle.ts).
 */
export function lockHubClosedWith(database: Database): LockHub {
  const hub = new LockHub(database);
  const close = database.close.bind(database);
  database.close = async () => {
    hub.close();
    await close();
  };
  return hub;
}
