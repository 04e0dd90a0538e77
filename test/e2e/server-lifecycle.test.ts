/**
 * The server's hold on its data folder and its Postgres, through the real `npm start`:
 * a second start on a live server's folder refuses, naming its pid, and touches nothing;
 * a server whose Postgres dies starts it again, never busy-loops while it is gone, and
 * still ends on SIGTERM; one that cannot get it back exits saying why; and a SIGTERM sent
 * to npm under load ends everything within the 5 s target, with every cell completing
 * after a restart.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Started, spawnCellflow, startCellflow, stopCellflow } from "../helpers/npm-start";
import { cpuSeconds, freePort, processesMentioning, waitFor } from "../helpers/processes";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-lifecycle-"));
fs.chmodSync(dataDir, 0o777);
const clusterDir = path.join(dataDir, "pg");
const pgVersion = path.join(clusterDir, "PG_VERSION");

let running: Started | undefined;
afterAll(async () => {
  if (fs.existsSync(`${pgVersion}.away`)) fs.renameSync(`${pgVersion}.away`, pgVersion);
  if (running) await stopCellflow(dataDir, running);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const postmasterPid = () =>
  Number(fs.readFileSync(path.join(clusterDir, "postmaster.pid"), "utf8").split("\n")[0]);

const api = async (s: Started, method: string, p: string, body?: unknown) => {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const health = async (s: Started) => {
  try {
    return (await (await fetch(`${s.url}/api/health`)).json()) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** Top-level entries of the data folder with their modification times. */
const folderState = () =>
  fs
    .readdirSync(dataDir)
    .sort()
    .map((name) => `${name}@${fs.statSync(path.join(dataDir, name)).mtimeMs}`);

/** Kills the postmaster with every backend, as an OOM kill of the database would. */
const killPostgres = () => {
  const pid = postmasterPid();
  process.kill(-pid, "SIGKILL");
  return pid;
};

let port = 0;
let pgPort = 0;

describe("server lifecycle", () => {
  it("a second npm start on a live server's data folder refuses, names its pid, touches nothing", async () => {
    port = await freePort();
    pgPort = await freePort();
    const first = await startCellflow(dataDir, port, pgPort);
    running = first;
    const postmaster = postmasterPid();
    const before = folderState();

    // The same command with the same settings, as a second terminal would run it.
    const second = spawnCellflow(dataDir, port, pgPort);
    const code = await second.exited;
    expect(code, second.output()).not.toBe(0);
    expect(second.output()).toContain("start-up refused");
    expect(second.output()).toContain(`pid ${first.pid}`);

    expect(postmasterPid()).toBe(postmaster);
    expect(processesMentioning(clusterDir)).toContain(postmaster);
    expect(folderState()).toEqual(before);
    expect(await health(first)).toEqual({ ok: true, db: "ok", backend: "local" });
  }, 300_000);

  it("a server whose Postgres is killed starts it again and serves on", async () => {
    const s = running as Started;
    const lost = killPostgres();
    const back = await waitFor(
      async () => s.output().includes("PostgreSQL restarted") && (await health(s)).db === "ok",
      60_000,
      200,
    );
    expect(back, s.output().slice(-3000)).toBe(true);
    expect(postmasterPid()).not.toBe(lost);
    const tables = await api(s, "GET", "/api/tables");
    expect(tables.status).toBe(200);
  }, 120_000);

  it("while its Postgres cannot come back it does not busy-loop, and SIGTERM still ends it", async () => {
    const s = running as Started;
    // A cluster the restart cannot start (and must not initialise afresh).
    fs.renameSync(pgVersion, `${pgVersion}.away`);
    killPostgres();
    const failures = () => s.output().split("restarting the embedded PostgreSQL failed").length - 1;
    expect(await waitFor(() => failures() >= 1, 30_000, 50)).toBe(true);
    const cpu0 = cpuSeconds(s.pid);
    const t0 = Date.now();
    // The retries back off (0.5 s, 1 s, 2 s): three more failures span a few seconds.
    expect(await waitFor(() => failures() >= 4, 30_000, 50)).toBe(true);
    const share = (cpuSeconds(s.pid) - cpu0) / ((Date.now() - t0) / 1000);
    process.stdout.write(`[e2e] CPU share while Postgres is gone: ${share.toFixed(2)}\n`);
    expect(share).toBeLessThan(0.5);

    const stopping = Date.now();
    expect(await stopCellflow(dataDir, s), s.output().slice(-3000)).toBe(true);
    await waitFor(() => s.child.exitCode !== null || s.child.signalCode !== null, 10_000);
    process.stdout.write(
      `[e2e] SIGTERM without Postgres: stopped in ${Date.now() - stopping} ms\n`,
    );
    expect(Date.now() - stopping).toBeLessThanOrEqual(5_000);
    running = undefined;
    fs.renameSync(`${pgVersion}.away`, pgVersion);
  }, 120_000);

  it("a server that cannot restart its Postgres exits non-zero, saying why", async () => {
    const s = await startCellflow(dataDir, port, pgPort);
    running = s;
    fs.renameSync(pgVersion, `${pgVersion}.away`);
    killPostgres();
    const exited = await waitFor(() => s.child.exitCode !== null, 60_000, 100);
    expect(exited, s.output().slice(-3000)).toBe(true);
    running = undefined;
    expect(s.child.exitCode).not.toBe(0);
    expect(s.output()).toContain("PostgreSQL could not be restarted");
    expect(s.output()).toContain("the server cannot run without it");
    expect(processesMentioning(clusterDir)).toEqual([]);
    fs.renameSync(`${pgVersion}.away`, pgVersion);
    // Not initialised afresh in its place: the data is still there for the next test.
    expect(fs.existsSync(path.join(clusterDir, "base"))).toBe(true);
  }, 300_000);

  it("SIGTERM to npm under load ends everything within 5 s; after a restart every cell completes", async () => {
    const s = await startCellflow(dataDir, port, pgPort);
    running = s;
    const wf = await api(s, "POST", "/api/workflows", {
      name: "Sleepy",
      definition: {
        inputs: [{ name: "ms", type: "number", required: true }],
        blocks: [{ id: "w", type: "wait", ms: "inputs.ms" }],
      },
    });
    expect(wf.status).toBe(201);
    const table = await api(s, "POST", "/api/tables", {
      name: "Load",
      columns: [
        { id: "ms", name: "Ms", type: "number" },
        { id: "out", name: "Out", type: "json" },
      ],
      groups: [
        {
          id: "sleepy",
          name: "Sleepy",
          kind: "workflow",
          workflowId: wf.body.id,
          inputs: { ms: "ms" },
          outputs: [{ columnId: "out", from: "w" }],
        },
      ],
    });
    expect(table.status).toBe(201);
    const tableId = String(table.body.id);
    // The first 20 rows keep every carrier in a 4 s wait; the other 980 cells queue behind.
    const rows = await api(s, "POST", `/api/tables/${tableId}/rows`, {
      rows: Array.from({ length: 1000 }, (_, i) => ({ data: { ms: i < 20 ? 4_000 : 0 } })),
    });
    expect(rows.status).toBe(201);
    // An open event stream, as a browser on the grid holds one.
    const events = new AbortController();
    const stream = await fetch(`${s.url}/api/tables/${tableId}/events`, {
      headers: { authorization: `Bearer ${s.key}` },
      signal: events.signal,
    });
    void stream.body?.pipeTo(new WritableStream()).catch(() => {});
    const run = await api(s, "POST", `/api/tables/${tableId}/runs`, { mode: "all" });
    expect(run).toMatchObject({ status: 202, body: { stamped: 1000 } });
    const runPath = `/api/tables/${tableId}/runs/${run.body.dispatchId}`;
    const busy = await waitFor(
      async () => {
        const counts = (await api(s, "GET", runPath)).body.counts as Record<string, number>;
        return counts.running === 20 && counts.queued === 980;
      },
      60_000,
      100,
    );
    expect(busy).toBe(true);

    // To npm alone, as a service manager or `docker stop` sends it.
    const t0 = Date.now();
    process.kill(s.child.pid as number, "SIGTERM");
    const ended = await waitFor(
      () => s.child.exitCode !== null || s.child.signalCode !== null,
      60_000,
      20,
    );
    const ms = Date.now() - t0;
    events.abort();
    process.stdout.write(`[e2e] SIGTERM under load: npm and the server exited in ${ms} ms\n`);
    expect(ended, s.output().slice(-3000)).toBe(true);
    expect(ms).toBeLessThanOrEqual(5_000);
    expect(s.output()).toContain("[cellflow] stopped");
    expect(processesMentioning(clusterDir)).toEqual([]);
    running = undefined;

    // Nothing lost: the interrupted cells went back to the queue and run again.
    const again = await startCellflow(dataDir, port, pgPort);
    running = again;
    const done = await waitFor(
      async () => (await api(again, "GET", runPath)).body.status === "completed",
      120_000,
      200,
    );
    expect(done, again.output().slice(-3000)).toBe(true);
    expect((await api(again, "GET", runPath)).body.counts).toEqual({
      error: 0,
      paused: 0,
      queued: 0,
      running: 0,
      cancelled: 0,
      completed: 1000,
    });
    expect(await stopCellflow(dataDir, again)).toBe(true);
    running = undefined;
  }, 400_000);
});
