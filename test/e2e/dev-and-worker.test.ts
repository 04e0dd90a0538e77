/**
 * `npm run dev` and `npm run worker` beside a running server, through the real commands:
 * the dev server starts on the embedded Postgres without building, serves the UI and the
 * API, leaves the production build and its stamp alone; `npm run worker` with no
 * DATABASE_URL joins that server's Postgres, carries its rows, and stops when the server
 * does; Ctrl-C leaves nothing running.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classifyDefinition } from "../helpers/fixtures";
import { type Started, startCellflow, stopCellflow } from "../helpers/npm-start";
import { freePort, processesMentioning, waitFor } from "../helpers/processes";
import { spawnWorkerWith } from "../helpers/workers";

const root = path.resolve(import.meta.dirname, "../..");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-dev-"));
fs.chmodSync(dataDir, 0o777);

let running: Started | undefined;
afterAll(async () => {
  if (running) await stopCellflow(dataDir, running);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const api = async (s: Started, method: string, p: string, body?: unknown) => {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/**
 * What `npm start` keys its "up to date" on, untouched by the dev server: the build and its
 * stamp, and tsconfig.json (a source of the stamp, which Next.js rewrites when it dislikes it).
 */
const buildState = () => [
  ...[".next/BUILD_ID", ".next/cellflow-build-stamp"].map((f) => {
    const file = path.join(root, f);
    return fs.existsSync(file) ? `${f}@${fs.statSync(file).mtimeMs}` : `${f} absent`;
  }),
  fs.readFileSync(path.join(root, "tsconfig.json"), "utf8"),
];

describe("npm run dev with a joined npm run worker", () => {
  it("serves without a build, a worker joins it and carries rows, and Ctrl-C stops everything", async () => {
    const before = buildState();
    // One carrier in the server: a run of slow rows finishes quickly only with the joined worker.
    const s = await startCellflow(dataDir, await freePort(), await freePort(), {
      script: "dev",
      env: { WORKER_CONCURRENCY: "1" },
    });
    running = s;
    expect(s.output()).toContain("dev server (Next.js, hot reload)");
    expect(s.output()).not.toContain("building the web app");
    expect(s.output()).toContain(`API key: ${s.key}  (new; kept in ${dataDir}/api-key)`);

    const page = await fetch(`${s.url}/signin`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>Cellflow</title>");
    expect(await (await fetch(`${s.url}/api/health`)).json()).toEqual({
      ok: true,
      db: "ok",
      backend: "local",
    });

    const worker = spawnWorkerWith({
      DATABASE_URL: undefined,
      DATABASE_URL_UNPOOLED: undefined,
      // The same CELLFLOW_SECRET_KEY as the server's (the test run's); none would be refused.
      CELLFLOW_DATA_DIR: dataDir,
      WORKER_CONCURRENCY: "10",
    });
    const joined = await waitFor(
      () => worker.output().includes("worker ready") || worker.child.exitCode !== null,
      60_000,
      100,
    );
    expect(joined && worker.child.exitCode, worker.output()).toBe(null);
    expect(worker.output()).toContain(
      `joining the embedded Postgres of the server at pid ${s.pid} (data folder ${dataDir})`,
    );

    const wf = await api(s, "POST", "/api/workflows", {
      name: "Slow classify",
      definition: {
        ...classifyDefinition,
        blocks: [
          { id: "pause", type: "wait", ms: 3_000, next: "double" },
          ...classifyDefinition.blocks,
        ],
      },
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const table = await api(s, "POST", "/api/tables", {
      name: "Joined",
      columns: [
        { id: "n", name: "N", type: "number" },
        { id: "size", name: "Size", type: "text" },
      ],
      groups: [
        {
          id: "classify",
          name: "Classify",
          kind: "workflow",
          workflowId: wf.body.id,
          inputs: { n: "n" },
          outputs: [{ columnId: "size", from: "result" }],
        },
      ],
    });
    expect(table.status, JSON.stringify(table.body)).toBe(201);
    const tableId = table.body.id as string;
    await api(s, "POST", `/api/tables/${tableId}/rows`, {
      rows: Array.from({ length: 10 }, (_, i) => ({ data: { n: i } })),
    });
    const run = await api(s, "POST", `/api/tables/${tableId}/runs`, { mode: "all" });
    expect(run.status).toBe(202);
    const t0 = Date.now();
    const done = await waitFor(
      async () =>
        (await api(s, "GET", `/api/tables/${tableId}/runs/${run.body.dispatchId}`)).body.status ===
        "completed",
      60_000,
      100,
    );
    expect(done).toBe(true);
    // Ten 3 s rows take 30 s on the server's one carrier; with the worker's ten, one round.
    expect(Date.now() - t0).toBeLessThan(20_000);
    const rows = await api(s, "GET", `/api/tables/${tableId}/rows`);
    expect((rows.body.rows as { data: { size?: string } }[]).map((r) => r.data.size)).toEqual([
      ...Array(6).fill("small"),
      ...Array(4).fill("big"),
    ]);

    // Ctrl-C: the worker hands back and exits, then the server stops Postgres.
    expect(await stopCellflow(dataDir, s, "SIGINT"), s.output().slice(-3000)).toBe(true);
    running = undefined;
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toContain(
      `the server at pid ${s.pid} is stopping: stopping the worker`,
    );
    expect(processesMentioning(path.join(dataDir, "pg"))).toEqual([]);
    // The server and npm exit right after the server's last line.
    expect(await waitFor(() => !fs.existsSync(`/proc/${s.pid}`), 10_000)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
    expect(buildState()).toEqual(before);
  }, 300_000);
});
