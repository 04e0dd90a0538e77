/**
 * The server's hold on its data folder, through the real `npm start`: a second start on a
 * live server's folder refuses, naming its pid, and touches nothing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Started, spawnCellflow, startCellflow, stopCellflow } from "../helpers/npm-start";
import { freePort, processesMentioning } from "../helpers/processes";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-lifecycle-"));
fs.chmodSync(dataDir, 0o777);
const clusterDir = path.join(dataDir, "pg");

let running: Started | undefined;
afterAll(async () => {
  if (running) await stopCellflow(dataDir, running);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const postmasterPid = () =>
  Number(fs.readFileSync(path.join(clusterDir, "postmaster.pid"), "utf8").split("\n")[0]);

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

describe("server lifecycle", () => {
  it("a second npm start on a live server's data folder refuses, names its pid, touches nothing", async () => {
    const port = await freePort();
    const pgPort = await freePort();
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
});
