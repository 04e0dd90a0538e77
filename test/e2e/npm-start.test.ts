/**
 * The real `npm start` path, end to end: embedded Postgres, migrations, the Next.js
 * server, the printed key; the API works through HTTP; SIGTERM leaves no postgres behind
 * and the next start reuses the data.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classifyDefinition } from "../helpers/fixtures";
import { type Started, startCellflow, stopCellflow } from "../helpers/npm-start";
import { freePort, processesMentioning, waitFor } from "../helpers/processes";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-e2e-"));
fs.chmodSync(dataDir, 0o777);

const start = (port: number, pgPort: number) => startCellflow(dataDir, port, pgPort);
const stop = (s: Started) => stopCellflow(dataDir, s);

const api = async (s: Started, method: string, p: string, body?: unknown) => {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

let running: Started | undefined;
afterAll(async () => {
  if (running) await stop(running);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start", () => {
  it("serves the API on embedded Postgres, stops cleanly, and restarts on the same data", async () => {
    const port = await freePort();
    const pgPort = await freePort();
    const first = await start(port, pgPort);
    running = first;

    const health = await fetch(`${first.url}/api/health`);
    expect(await health.json()).toEqual({ ok: true, db: "ok", backend: "local" });

    // The API describes itself without a key: the document, and a page rendering it.
    const described = await fetch(`${first.url}/api/openapi.json`);
    expect(described.status).toBe(200);
    const doc = (await described.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/tables/{id}/runs");
    const docsPage = await fetch(`${first.url}/api/docs`);
    expect(docsPage.headers.get("content-type")).toContain("text/html");
    expect(await docsPage.text()).toContain('id="createRun"');

    // The seeded demo fills itself through auto-run.
    const tables = await api(first, "GET", "/api/tables");
    const demo = (tables.body.tables as { id: string; name: string }[]).find(
      (t) => t.name === "Demo: accounts",
    );
    expect(demo).toBeDefined();
    const demoFilled = await waitFor(
      async () => {
        const r = await api(first, "GET", `/api/tables/${demo?.id}/rows`);
        return (r.body.rows as { data: Record<string, unknown> }[]).every(
          (x) => typeof x.data.pitch === "string",
        );
      },
      60_000,
      200,
    );
    expect(demoFilled).toBe(true);

    const wf = await api(first, "POST", "/api/workflows", {
      name: "Classify",
      definition: classifyDefinition,
    });
    expect(wf.status).toBe(201);
    const table = await api(first, "POST", "/api/tables", {
      name: "Numbers",
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
          dependsOn: ["n"],
        },
      ],
    });
    expect(table.status).toBe(201);
    const rows = await api(first, "POST", `/api/tables/${table.body.id}/rows`, {
      rows: [{ data: { n: 1 } }, { data: { n: 9 } }],
    });
    expect(rows.status).toBe(201);
    const listed = await api(first, "GET", `/api/tables/${table.body.id}/rows`);
    expect((listed.body.rows as { data: unknown }[]).map((r) => r.data)).toEqual([
      { n: 1 },
      { n: 9 },
    ]);
    const unauth = await fetch(`${first.url}/api/tables`);
    expect(unauth.status).toBe(401);
    // Read, as a browser would: a response left unread keeps its connection busy, and the
    // shutdown then waits out its grace period for running requests before cutting it.
    await unauth.text();

    // A run through the in-process worker completes, and a Stop holds.
    const many = await api(first, "POST", `/api/tables/${table.body.id}/rows`, {
      rows: Array.from({ length: 198 }, (_, i) => ({ data: { n: i } })),
    });
    expect(many.status).toBe(201);
    const run = await api(first, "POST", `/api/tables/${table.body.id}/runs`, { mode: "all" });
    expect(run).toMatchObject({ status: 202, body: { stamped: 200 } });
    const finished = await waitFor(
      async () =>
        (await api(first, "GET", `/api/tables/${table.body.id}/runs/${run.body.dispatchId}`)).body
          .status === "completed",
      60_000,
      100,
    );
    expect(finished).toBe(true);
    const after = await api(first, "GET", `/api/tables/${table.body.id}/rows?limit=3`);
    expect((after.body.rows as { data: unknown }[]).map((r) => r.data)).toEqual([
      { n: 1, size: "small" },
      { n: 9, size: "big" },
      { n: 0, size: "small" },
    ]);
    const slow = await api(first, "POST", "/api/workflows", {
      name: "Slow",
      definition: { blocks: [{ id: "w", type: "wait", ms: 30_000 }] },
    });
    await api(first, "PATCH", `/api/tables/${table.body.id}`, {
      columns: [
        { id: "n", name: "N", type: "number" },
        { id: "size", name: "Size", type: "text" },
        { id: "slow", name: "Slow", type: "json" },
      ],
      groups: [
        ...(table.body.groups as unknown[]),
        {
          id: "slow",
          name: "Slow",
          kind: "workflow",
          workflowId: slow.body.id,
          outputs: [{ columnId: "slow", from: "w" }],
        },
      ],
    });
    const slowRun = await api(first, "POST", `/api/tables/${table.body.id}/runs`, {
      mode: "all",
      groupIds: ["slow"],
    });
    expect(slowRun.body.stamped).toBe(200);
    const stopped = await api(first, "POST", `/api/tables/${table.body.id}/runs/cancel`, {});
    expect(stopped).toMatchObject({ status: 200, body: { cancelled: 200 } });
    const held = await api(
      first,
      "GET",
      `/api/tables/${table.body.id}/runs/${slowRun.body.dispatchId}`,
    );
    expect(held.body).toMatchObject({
      status: "cancelled",
      counts: { queued: 0, running: 0, cancelled: 200 },
    });

    expect(processesMentioning(path.join(dataDir, "pg")).length).toBeGreaterThan(0);
    expect(await stop(first), first.output().slice(-3000)).toBe(true);
    expect(processesMentioning(path.join(dataDir, "pg"))).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, "pg", "postmaster.pid"))).toBe(false);

    const second = await start(port, pgPort);
    running = second;
    expect(second.key).toBe(first.key);
    const again = await api(second, "GET", `/api/tables/${table.body.id}`);
    expect(again.body).toMatchObject({ name: "Numbers", rowCount: 200 });
    expect(await stop(second), second.output().slice(-3000)).toBe(true);
    expect(processesMentioning(path.join(dataDir, "pg"))).toEqual([]);
    process.stdout.write(`[e2e] first start ${first.ms} ms, restart ${second.ms} ms\n`);
  }, 400_000);

  it("a postgres orphaned by a SIGKILLed server does not block the next start", async () => {
    const port = await freePort();
    const pgPort = await freePort();
    const first = await start(port, pgPort);
    running = first;
    // SIGKILL the server's process group (npm and the server it execs), only this test's:
    // postgres runs in its own process group and survives as an orphan, as after an OOM kill.
    if (first.child.pid) process.kill(-first.child.pid, "SIGKILL");
    await waitFor(() => first.child.exitCode !== null || first.child.signalCode !== null, 10_000);
    expect(processesMentioning(path.join(dataDir, "pg")).length).toBeGreaterThan(0);

    const second = await start(port, pgPort);
    running = second;
    const health = await fetch(`${second.url}/api/health`);
    expect(await health.json()).toEqual({ ok: true, db: "ok", backend: "local" });
    expect(await stop(second), second.output().slice(-3000)).toBe(true);
    expect(processesMentioning(path.join(dataDir, "pg"))).toEqual([]);
  }, 400_000);
});
