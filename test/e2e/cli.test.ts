/**
 * The `cellflow` command against the real `npm start`: tables, import, run --follow to the
 * end (plain lines, as in a pipe), export, stop (of a run and of a followed run), Ctrl-C
 * detaching, events --after, and the exit codes for bad usage and a bad key.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CellflowClient, cellflowClient } from "@/client/cellflow-client";
import { type Started, startCellflow, stopCellflow } from "../helpers/npm-start";
import { freePort, waitFor } from "../helpers/processes";

const root = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(root, "bin/cellflow.mjs");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-cli-e2e-"));
fs.chmodSync(dataDir, 0o777);
const ROWS = 300;

let server: Started | undefined;
let client: CellflowClient;
let tableId = "";

function env(over: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  out.CELLFLOW_URL = server?.url;
  out.CELLFLOW_API_KEY = server?.key;
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** `cellflow <args>` as a child process (stdout a pipe, so never a terminal). */
function cellflow(args: string[], over: Record<string, string | undefined> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dataDir,
    env: env(over),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

async function run(args: string[], over: Record<string, string | undefined> = {}) {
  const c = cellflow(args, over);
  const code = await c.closed;
  return { code, stdout: c.stdout(), stderr: c.stderr() };
}

const lines = (text: string) => text.split("\n").filter((l) => l.length > 0);

async function runView(id: string) {
  const r = await client.GET("/api/tables/{id}/runs/{dispatchId}", {
    params: { path: { id: tableId, dispatchId: id } },
  });
  if (!r.data) throw new Error(JSON.stringify(r.error));
  return r.data;
}

beforeAll(async () => {
  server = await startCellflow(dataDir, await freePort(), await freePort());
  client = cellflowClient({ baseUrl: server.url, apiKey: server.key });
  const classify = await client.POST("/api/workflows", {
    body: {
      name: "Classify",
      definition: {
        inputs: [{ name: "n", type: "number", required: true }],
        blocks: [
          { id: "result", type: "transform", expression: "inputs.n > 150 ? 'big' : 'small'" },
        ],
      },
    },
  });
  const slow = await client.POST("/api/workflows", {
    body: { name: "Slow", definition: { blocks: [{ id: "w", type: "wait", ms: 60_000 }] } },
  });
  if (!classify.data || !slow.data) throw new Error("workflows not created");
  const table = await client.POST("/api/tables", {
    body: {
      name: "Numbers",
      columns: [
        { id: "n", name: "N", type: "number" },
        { id: "size", name: "Size", type: "text" },
        { id: "slow", name: "Slow", type: "json" },
      ],
      groups: [
        {
          id: "classify",
          name: "Classify",
          kind: "workflow",
          workflowId: classify.data.id,
          inputs: { n: "n" },
          outputs: [{ columnId: "size", from: "result" }],
        },
        {
          id: "slow",
          name: "Slow",
          kind: "workflow",
          workflowId: slow.data.id,
          outputs: [{ columnId: "slow", from: "w" }],
        },
      ],
    },
  });
  if (!table.data) throw new Error(JSON.stringify(table.error));
  tableId = table.data.id;
}, 200_000);

afterAll(async () => {
  if (server) await stopCellflow(dataDir, server);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 150_000);

describe("the cellflow CLI against npm start", () => {
  it("imports a CSV, lists the table, follows a run to done = total, and exports the same rows", async () => {
    const csv = path.join(dataDir, "numbers.csv");
    fs.writeFileSync(csv, `N\n${Array.from({ length: ROWS }, (_, i) => i + 1).join("\n")}\n`);
    const imported = await run(["import", "Numbers", csv]);
    expect(imported, imported.stderr).toMatchObject({ code: 0 });
    expect(imported.stdout).toBe(`inserted ${ROWS} rows into Numbers\n`);

    // `npx cellflow` from the checkout works: the package's own bin.
    const listed = spawnSync("npx", ["--no-install", "cellflow", "tables"], {
      cwd: root,
      env: env(),
      encoding: "utf8",
    });
    expect(listed.status, listed.stderr).toBe(0);
    expect(lines(listed.stdout)[0]).toMatch(/^ID\s+ROWS\s+AUTO\s+NAME$/);
    expect(listed.stdout).toMatch(new RegExp(`${tableId}\\s+${ROWS}\\s+on\\s+Numbers\\n`));

    // --where col=value: the column by name, the value read as a number.
    const dry = await run(["run", "Numbers", "--group", "classify", "--where", "N=5", "--dry-run"]);
    expect(dry, dry.stderr).toMatchObject({ code: 0 });
    expect(lines(dry.stdout)[0]).toBe(
      "dry run (nothing started): 1 row, 1 cell, 0 estimated credits",
    );

    const followed = await run(["run", "Numbers", "--group", "Classify", "--follow"]);
    expect(followed, followed.stderr).toMatchObject({ code: 0 });
    const out = lines(followed.stdout);
    const id = /^run (\S+) started: 300 cells; following/.exec(out[0] ?? "")?.[1];
    expect(id, followed.stdout).toBeDefined();
    const progress = out.slice(1, -1).map((l) => {
      const m = new RegExp(
        `^run ${id}: (\\d+)/(\\d+) done \\((\\d+)%\\), (\\?|[\\d.]+) cells/s, (\\d+) errors?, ETA (\\?|\\S+)$`,
      ).exec(l);
      expect(m, l).not.toBeNull();
      return { done: Number(m?.[1]), total: Number(m?.[2]) };
    });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]?.done).toBeGreaterThanOrEqual(progress[i - 1]?.done ?? 0);
    expect(progress.at(-1)).toEqual({ done: ROWS, total: ROWS });
    expect(out.at(-1)).toMatch(new RegExp(`^run ${id} completed: 300/300 done, 0 errors in \\S+$`));
    expect(await runView(id ?? "")).toMatchObject({
      status: "completed",
      counts: { completed: ROWS },
    });

    const exported = await run(["export", "Numbers"]);
    expect(exported, exported.stderr).toMatchObject({ code: 0 });
    const direct = await fetch(`${server?.url}/api/tables/${tableId}/export`, {
      headers: { authorization: `Bearer ${server?.key}` },
    });
    expect(exported.stdout).toBe(await direct.text());
    const rows = exported.stdout.split("\r\n");
    expect(rows[0]).toBe("N,Size,Slow");
    expect(rows.slice(1, 6)).toEqual(["1,small,", "2,small,", "3,small,", "4,small,", "5,small,"]);
    expect(rows[ROWS]).toBe(`${ROWS},big,`);
  }, 120_000);

  it("a bad CSV value exits 1 with the API's message and issues", async () => {
    const csv = path.join(dataDir, "bad.csv");
    fs.writeFileSync(csv, "N\n1\nseven\n");
    const r = await run(["import", "Numbers", csv]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("nothing was imported (HTTP 400 validation_failed)");
    expect(r.stderr).toContain("line 3, column N: must be a number");
  });

  it("stop ends a slow run, and a follow of it exits 1 saying it was stopped", async () => {
    const started = await run(["run", "Numbers", "--group", "slow"]);
    expect(started, started.stderr).toMatchObject({ code: 0 });
    const id = /^run (\S+) started: 300 cells\n$/.exec(started.stdout)?.[1] ?? "";
    expect(id).not.toBe("");
    expect((await runView(id)).status).toBe("active");
    const stopped = await run(["stop", "Numbers", "--run", id]);
    expect(stopped, stopped.stderr).toMatchObject({ code: 0 });
    expect(stopped.stdout).toBe(`stopped ${ROWS} cells\n`);
    expect(await runView(id)).toMatchObject({
      status: "cancelled",
      counts: { queued: 0, running: 0, cancelled: ROWS },
    });

    // A run someone stops while it is followed ends the follow with exit 1.
    const follower = cellflow(["run", "Numbers", "--group", "slow", "--mode", "all", "--follow"]);
    expect(await waitFor(() => / done \(/.test(follower.stdout()), 30_000)).toBe(true);
    const second = /^run (\S+) started/.exec(follower.stdout())?.[1] ?? "";
    const stop = await run(["stop", "Numbers", "--group", "Slow"]);
    expect(stop.stdout).toBe(`stopped ${ROWS} cells\n`);
    expect(await follower.closed).toBe(1);
    expect(follower.stderr()).toContain(`run ${second} was stopped: ${ROWS} cells cancelled`);
  }, 90_000);

  it("Ctrl-C while following detaches: the run goes on, and the command to stop it is printed", async () => {
    const follower = cellflow(["run", "Numbers", "--group", "slow", "--mode", "all", "--follow"]);
    expect(await waitFor(() => / done \(/.test(follower.stdout()), 30_000)).toBe(true);
    const id = /^run (\S+) started/.exec(follower.stdout())?.[1] ?? "";
    follower.child.kill("SIGINT");
    expect(await follower.closed).toBe(130);
    expect(follower.stderr()).toContain(`detached; run ${id} goes on`);
    expect(follower.stderr()).toContain(`stop it with: cellflow stop Numbers --run ${id}`);
    expect((await runView(id)).status).toBe("active");
    const stop = await run(["stop", "Numbers", "--run", id]);
    expect(stop.stdout).toBe(`stopped ${ROWS} cells\n`);
  }, 90_000);

  it("events --after prints the events after that position, one JSON line each", async () => {
    const all = cellflow(["events", "Numbers", "--after", "0"]);
    expect(await waitFor(() => lines(all.stdout()).length >= 20, 30_000)).toBe(true);
    all.child.kill("SIGINT");
    expect(await all.closed).toBe(0);
    const events = lines(all.stdout()).map(
      (l) => JSON.parse(l) as { id: number; event: string; data: unknown },
    );
    expect(events[0]?.event).toBe("schema");
    expect(events.map((e) => e.event)).toContain("rows");
    for (let i = 1; i < events.length; i++)
      expect(events[i]?.id).toBeGreaterThan(events[i - 1]?.id ?? 0);

    const from = events[9]?.id ?? 0;
    const later = cellflow(["events", "Numbers", "--after", String(from)]);
    expect(await waitFor(() => lines(later.stdout()).length >= 5, 30_000)).toBe(true);
    later.child.kill("SIGINT");
    expect(await later.closed).toBe(0);
    const next = lines(later.stdout()).map((l) => JSON.parse(l) as { id: number });
    expect(next.slice(0, 5)).toEqual(events.slice(10, 15));
  }, 60_000);

  it("bad usage exits 2; a bad key exits 1 with the API's message", async () => {
    const flag = await run(["run", "Numbers", "--bogus"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--bogus'");
    expect((await run(["frobnicate"])).code).toBe(2);
    expect((await run(["export"])).code).toBe(2);
    const where = await run(["run", "Numbers", "--where", "N=seven"]);
    expect(where.code).toBe(2);
    expect(where.stderr).toContain('"seven" is not a number');

    const noKey = await run(["tables"], { CELLFLOW_API_KEY: undefined });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("CELLFLOW_API_KEY");

    const badKey = await run(["tables"], { CELLFLOW_API_KEY: "cf_not_a_key" });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toBe("cellflow: The API key is not valid (HTTP 401 unauthorized)\n");
    const unknown = await run(["export", "Nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no table has the id or name "Nope"');
  }, 60_000);
});
