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
 */
import fs from "node:fs";
import path from "node:path";

export const LOCK_FILE = "server.lock";

interface Holder {
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
  ) {
    super(
      `the data folder ${dataDir} is in use by a running Cellflow server (pid ${holder.pid}, up since ${holder.startedAt}); stop that one first, or set CELLFLOW_DATA_DIR to another folder`,
    );
    this.name = "DataDirInUseError";
  }
}

export interface DataDirLock {
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

function isAlive(h: Holder): boolean {
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
      return releaser(lockFile, mine.pid);
    } catch (err) {
      // Another starter linked first: judge its lock on the next round.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  throw new Error(`could not take the lock of the data folder ${dataDir}`);
}

function releaser(lockFile: string, pid: number): DataDirLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (parse(readText(lockFile))?.pid === pid) fs.rmSync(lockFile, { force: true });
    },
  };
}
