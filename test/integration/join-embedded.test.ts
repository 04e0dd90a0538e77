/**
 * `npm run worker` without DATABASE_URL joins the embedded Postgres of the server on its
 * data folder, found through the folder's lock: a live record gives a URL that connects
 * (with the password from the folder, never from the lock); a record whose process is
 * gone, or no record, is one clear line and exit 2; the worker takes the server's secret
 * key or refuses; and it stops, handing its cells back, when the server says it is stopping.
 * The "server" here is this test process holding the lock, in front of the test Postgres.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { EMBEDDED_USER, PASSWORD_FILE } from "@db/embedded";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { generateSecretKey } from "@/security/secret-box";
import { secretKeyId } from "@/security/secret-key";
import {
  type DataDirLock,
  LOCK_FILE,
  lockDataDir,
  processStartTicks,
  readLiveHolder,
} from "@/server/data-dir-lock";
import {
  findEmbeddedServer,
  joinedWorkersGone,
  waitForEmbeddedServer,
} from "@/server/join-embedded";
import { waitFor } from "../helpers/processes";
import { spawnWorkerWith } from "../helpers/workers";

const dirs: string[] = [];
const locks: DataDirLock[] = [];
afterAll(() => {
  for (const lock of locks) lock.release();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-join-"));
  dirs.push(dir);
  return dir;
}

/** A database of this file's own, cloned from the migrated template, with its URL pieces. */
async function cloneDatabase(): Promise<{ name: string; port: number; password: string }> {
  const adminUrl = new URL(inject("pgAdminUrl"));
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`create database ${name} template cellflow_template`);
  await admin.end();
  return {
    name,
    port: Number(adminUrl.port),
    password: decodeURIComponent(adminUrl.password),
  };
}

/** This process as the server on `dir`: the lock, the password file, the published details. */
async function serveFrom(dir: string, key: string, fromEnv = false) {
  const db = await cloneDatabase();
  fs.writeFileSync(path.join(dir, PASSWORD_FILE), db.password, { mode: 0o600 });
  const lock = lockDataDir(dir);
  locks.push(lock);
  lock.publish({
    postgres: { host: "127.0.0.1", port: db.port, user: EMBEDDED_USER, database: db.name },
    secretKey: { id: secretKeyId(key), fromEnv },
  });
  return { lock, db };
}

const noServer = (dir: string) =>
  `no Cellflow server is running on data folder ${dir}: start one with npm start, or set DATABASE_URL`;

describe("finding the server on a data folder", () => {
  it("a live server's record gives a URL that connects, and the lock never holds the password", async () => {
    const dir = dataDir();
    const key = generateSecretKey();
    fs.writeFileSync(path.join(dir, "secret-key"), `${key}\n`, { mode: 0o600 });
    const { db } = await serveFrom(dir, key);

    const found = findEmbeddedServer({ dataDir: dir, shownDir: dir, envSecretKey: undefined });
    if (!found.ok) throw new Error(found.reason.message);
    expect(found.value.pid).toBe(process.pid);
    expect(found.value.secretKey).toBe(key);
    const client = new pg.Client({ connectionString: found.value.url });
    await client.connect();
    const { rows } = await client.query<{ db: string }>("select current_database() as db");
    await client.end();
    expect(rows[0]?.db).toBe(db.name);

    const lockText = fs.readFileSync(path.join(dir, LOCK_FILE), "utf8");
    expect(lockText).not.toContain(db.password);
    expect(lockText).not.toContain(key);
    // Publishing rewrote the lock, and it still holds: a second server would refuse.
    expect(() => lockDataDir(dir)).toThrow(/in use by a running Cellflow server/);
  });

  it("a released lock publishes nothing more, and the folder is free for the next server", () => {
    const dir = dataDir();
    const lock = lockDataDir(dir);
    expect(lock.publish({ stopping: true })).toBe(true);
    expect(readLiveHolder(dir)).toMatchObject({ ok: true, value: { stopping: true } });
    lock.release();
    expect(lock.publish({ stopping: false })).toBe(false);
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const next = lockDataDir(dir);
    locks.push(next);
    expect(readLiveHolder(dir)).toMatchObject({ ok: true, value: { pid: process.pid } });
  });

  it("no lock at all is no server: one line naming the folder", () => {
    const dir = dataDir();
    const found = findEmbeddedServer({ dataDir: dir, shownDir: "shown", envSecretKey: undefined });
    expect(found).toEqual({ ok: false, reason: { kind: "no-server", message: noServer("shown") } });
  });

  it("a lock whose process is gone, or whose pid now runs another process, is no server", () => {
    const dir = dataDir();
    // A pid that existed and has exited.
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    expect(gone).toBeGreaterThan(0);
    const write = (record: object) =>
      fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(record));
    const postgres = { host: "127.0.0.1", port: 5432, user: "cellflow", database: "cellflow" };
    write({ pid: gone, startedAt: new Date().toISOString(), postgres });
    expect(readLiveHolder(dir)).toMatchObject({ ok: false, reason: "stale" });
    expect(findEmbeddedServer({ dataDir: dir, shownDir: dir, envSecretKey: undefined })).toEqual({
      ok: false,
      reason: { kind: "no-server", message: noServer(dir) },
    });

    // This process's pid with another start time: the pid was reused after the server died.
    const ticks = processStartTicks(process.pid);
    if (ticks !== undefined) {
      write({ pid: process.pid, startTicks: ticks + 1, startedAt: "then", postgres });
      const found = findEmbeddedServer({ dataDir: dir, shownDir: dir, envSecretKey: undefined });
      expect(found.ok ? "joined" : found.reason.kind).toBe("no-server");
    }
  });

  it("a server still starting (its Postgres not published) is waited for, then named", async () => {
    const dir = dataDir();
    const lock = lockDataDir(dir);
    locks.push(lock);
    const found = await waitForEmbeddedServer({
      dataDir: dir,
      shownDir: dir,
      envSecretKey: undefined,
      timeoutMs: 1_000,
      pollMs: 50,
    });
    expect(found.ok ? "joined" : found.reason.message).toBe(
      `the Cellflow server at pid ${process.pid} on data folder ${dir} has not started its Postgres yet after 1 s; try again once it prints its URL`,
    );
  });

  it("the worker uses the server's secret key, and refuses a CELLFLOW_SECRET_KEY that differs", async () => {
    const dir = dataDir();
    const key = generateSecretKey();
    fs.writeFileSync(path.join(dir, "secret-key"), `${key}\n`, { mode: 0o600 });
    await serveFrom(dir, key);
    const opts = { dataDir: dir, shownDir: "d" };
    // The same key given as hex is the same key.
    const hex = Buffer.from(key, "base64").toString("hex");
    expect(findEmbeddedServer({ ...opts, envSecretKey: hex }).ok).toBe(true);
    const other = findEmbeddedServer({ ...opts, envSecretKey: generateSecretKey() });
    expect(other.ok ? "joined" : other.reason).toEqual({
      kind: "secret-key",
      message: `CELLFLOW_SECRET_KEY here differs from the key the server at pid ${process.pid} uses (kept in d/secret-key): unset it, or set the same value`,
    });
  });

  it("a server given its own CELLFLOW_SECRET_KEY is joined only with the same value", async () => {
    const dir = dataDir();
    const serverKey = generateSecretKey();
    await serveFrom(dir, serverKey, true);
    const opts = { dataDir: dir, shownDir: dir };
    const without = findEmbeddedServer({ ...opts, envSecretKey: undefined });
    expect(without.ok ? "joined" : without.reason.message).toMatch(
      /was started with its own CELLFLOW_SECRET_KEY: set the same value here/,
    );
    const same = findEmbeddedServer({ ...opts, envSecretKey: serverKey });
    expect(same.ok && same.value.secretKey).toBe(serverKey);
  });
});

describe("npm run worker without DATABASE_URL", () => {
  it("with no server on the data folder, says so in one line and exits 2", async () => {
    const dir = dataDir();
    const worker = spawnWorkerWith({
      DATABASE_URL: undefined,
      DATABASE_URL_UNPOOLED: undefined,
      CELLFLOW_DATA_DIR: dir,
    });
    expect(await worker.exited).toBe(2);
    expect(worker.output().trim()).toBe(`[cellflow] ${noServer(dir)}`);
    // Touched nothing: no lock, no key, no password file.
    expect(fs.readdirSync(dir)).toEqual([]);
  }, 60_000);

  it("joins the server's Postgres with its key, says so, and stops when the server is stopping", async () => {
    const dir = dataDir();
    const key = generateSecretKey();
    fs.writeFileSync(path.join(dir, "secret-key"), `${key}\n`, { mode: 0o600 });
    const { lock, db } = await serveFrom(dir, key);
    const worker = spawnWorkerWith({
      DATABASE_URL: undefined,
      DATABASE_URL_UNPOOLED: undefined,
      CELLFLOW_SECRET_KEY: undefined,
      CELLFLOW_DATA_DIR: dir,
    });
    const ready = await waitFor(
      () => worker.output().includes("worker ready") || worker.child.exitCode !== null,
      60_000,
      50,
    );
    expect(ready && worker.child.exitCode, worker.output()).toBe(null);
    expect(worker.output()).toContain(
      `[cellflow] joining the embedded Postgres of the server at pid ${process.pid} (data folder ${dir})`,
    );
    expect(worker.output()).not.toContain(db.password);

    const adminUrl = new URL(inject("pgAdminUrl"));
    adminUrl.pathname = `/${db.name}`;
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    const joined = await admin.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'cellflow-worker-joined%'",
    );
    await admin.end();
    expect(joined.rows[0]?.n).toBeGreaterThan(0);

    // The server's shutdown: mark the lock, then wait for joined workers to leave.
    lock.publish({ stopping: true });
    await joinedWorkersGone(adminUrl.toString());
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toContain(
      `[cellflow] the server at pid ${process.pid} is stopping: stopping the worker`,
    );
  }, 90_000);
});
