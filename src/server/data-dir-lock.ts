/**
 * One server per data folder. Invariant: while a server process lives, `server.lock` in
 * its data folder names it, and a second `npm start` there refuses before it touches
 * anything (Postgres included); a lock whose process is gone (killed hard, the machine
 * rebooted) is stale and is taken over.
 *
 * A pid alone is not proof of life: after a reboot or a long time the number can belong to
 * another process. The lock also records the process's start time (clock ticks since boot,
 * /proc/<pid>/stat) and the boot id, so a reused pid reads as stale. Without /proc the
 * pid's existence is all there is to go on.
 *
 * The holder can add what other processes of the project need to find it (its Postgres,
 * which secret key it uses, that it is stopping): the lock is rewritten in one step (a
 * rename), only while it is still this process's, and never holds a password or a key.
 */
import fs from "node:fs";
import path from "node:path";

export const LOCK_FILE = "server.lock";

/** What a running server tells the other processes of its project, besides that it lives. */
export interface Published {
  /** Its embedded Postgres, without the password (that stays in the data folder's file). */
  postgres?: { host: string; port: number; user: string; database: string };
  /** A fingerprint of the secret key it uses (secretKeyId), and whether it came from the environment. */
  secretKey?: { id: string; fromEnv: boolean };
  /** Set when it begins to shut down: joined workers stop before its Postgres does. */
  stopping?: boolean;
}

export interface Holder extends Published {
  pid: number;
  /** Start time of the process, in clock ticks since boot; absent without /proc. */
  startTicks?: number;
  bootId?: string;
  startedAt: string;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: Holder,
    options?: ErrorOptions,
  ) {
    super(
      `the data folder ${dataDir} is in use by a running Cellflow server (pid ${holder.pid}, up since ${holder.startedAt}); stop that one first, or set CELLFLOW_DATA_DIR to another folder`,
      options,
    );
    this.name = "DataDirInUseError";
  }
}

export interface DataDirLock {
  /**
   * Adds to what the lock tells others (merged with what was published before); false when
   * the lock is no longer this process's or could not be rewritten. Never throws.
   */
  publish(details: Published): boolean;
  /** Removes the lock if it is still this process's. Synchronous: safe in an exit handler. */
  release(): void;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Start time (field 22 of /proc/<pid>/stat) of a process that is running; undefined when
 * there is none, or only its zombie. The command name before the fields may hold spaces
 * and parentheses, hence the last ")".
 */
export function processStartTicks(pid: number): number | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  const ticks = Number(fields[19]);
  return Number.isFinite(ticks) ? ticks : undefined;
}

const bootId = () => readText("/proc/sys/kernel/random/boot_id")?.trim();
const hasProc = () => fs.existsSync("/proc/self/stat");

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, and runs as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The holder's process still runs (the same process, not another one under its pid). */
export function isAlive(h: Holder): boolean {
  if (!Number.isInteger(h.pid) || h.pid <= 0) return false;
  if (!hasProc()) return pidExists(h.pid);
  if (h.bootId && h.bootId !== bootId()) return false;
  const ticks = processStartTicks(h.pid);
  if (ticks === undefined) return false;
  return h.startTicks === undefined || h.startTicks === ticks;
}

function parse(text: string | undefined): Holder | undefined {
  if (!text) return undefined;
  try {
    const h = JSON.parse(text) as Holder;
    return typeof h.pid === "number" ? h : undefined;
  } catch {
    return undefined;
  }
}

function me(): Holder {
  return {
    pid: process.pid,
    startTicks: processStartTicks(process.pid),
    bootId: bootId(),
    startedAt: new Date().toISOString(),
  };
}

/**
 * Takes the data folder for this process, or throws DataDirInUseError naming the live
 * holder, having written nothing. The lock appears with its content in one step (a hard
 * link to a file written first), so a reader never sees it half written.
 */
export function lockDataDir(dataDir: string, shownAs = dataDir): DataDirLock {
  const lockFile = path.join(dataDir, LOCK_FILE);
  const mine = me();
  const tmp = path.join(dataDir, `${LOCK_FILE}.${process.pid}.tmp`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const seen = readText(lockFile);
    if (seen !== undefined) {
      const holder = parse(seen);
      if (holder && isAlive(holder)) throw new DataDirInUseError(shownAs, holder);
      // Stale (or unreadable): remove it, unless another starter replaced it meanwhile.
      if (readText(lockFile) === seen) fs.rmSync(lockFile, { force: true });
    }
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(tmp, JSON.stringify(mine));
    try {
      fs.linkSync(tmp, lockFile);
      return holding(lockFile, mine);
    } catch (err) {
      // Another starter linked first: judge its lock on the next round.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  throw new Error(`could not take the lock of the data folder ${dataDir}`);
}

export type LiveHolder =
  | { ok: true; value: Holder }
  | { ok: false; reason: "none" | "stale"; holder?: Holder };

/**
 * The server holding the data folder, judged as lockDataDir judges it: `none` when there
 * is no lock (or it cannot be read), `stale` when its process is gone. Reads only.
 */
export function readLiveHolder(dataDir: string): LiveHolder {
  const holder = parse(readText(path.join(dataDir, LOCK_FILE)));
  if (!holder) return { ok: false, reason: "none" };
  return isAlive(holder) ? { ok: true, value: holder } : { ok: false, reason: "stale", holder };
}

function holding(lockFile: string, mine: Holder): DataDirLock {
  let released = false;
  let current = mine;
  const stillMine = () => !released && parse(readText(lockFile))?.pid === mine.pid;
  return {
    publish(details) {
      if (!stillMine()) return false;
      current = { ...current, ...details };
      // A rename replaces the file in one step: a reader sees the old record or the new.
      const tmp = `${lockFile}.${mine.pid}.tmp`;
      try {
        fs.writeFileSync(tmp, JSON.stringify(current));
        fs.renameSync(tmp, lockFile);
        return true;
      } catch {
        // The lock itself still holds; only what it tells others is stale.
        fs.rmSync(tmp, { force: true });
        return false;
      }
    },
    release() {
      if (!stillMine()) return;
      released = true;
      fs.rmSync(lockFile, { force: true });
    },
  };
}

/** The data folder as a person knows it: relative inside the project, else its full path. */
export function shownDataDir(root: string, dataDir: string): string {
  const rel = path.relative(root, dataDir);
  if (!rel) return ".";
  return rel.startsWith("..") || path.isAbsolute(rel) ? dataDir : rel;
}
