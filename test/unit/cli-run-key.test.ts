/**
 * `cellflow run` sends an `Idempotency-Key`, one of its own per invocation, so a repeat
 * of its request (a retry, a proxy's) starts the run once; against a small HTTP server
 * that answers the two calls the command makes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runCommand } from "@/cli/commands/run";
import type { CliContext } from "@/cli/context";
import type { Schemas } from "@/client/cellflow-client";

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

const TABLE: Schemas["TableView"] = {
  id: "tbl_1",
  name: "Numbers",
  columns: [{ id: "n", name: "N", type: "number" }],
  groups: [
    {
      id: "g",
      name: "G",
      kind: "workflow",
      workflowId: "wf_1",
      version: "live",
      inputs: {},
      outputs: [],
      dependsOn: [],
      autoRun: false,
    },
  ],
  rowCount: 3,
  schemaVersion: 1,
  autoRun: true,
  maxCreditsPerRow: null,
  createdAt: new Date(0).toISOString(),
  updatedAt: new Date(0).toISOString(),
};

/** The server: the table list, and each run request's Idempotency-Key (absent: null). */
async function serve(): Promise<{ url: string; keys: (string | null)[] }> {
  const keys: (string | null)[] = [];
  server = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.method === "GET" && req.url === "/api/tables") {
      res.end(JSON.stringify({ tables: [TABLE] }));
      return;
    }
    if (req.method === "POST" && req.url === `/api/tables/${TABLE.id}/runs`) {
      const k = req.headers["idempotency-key"];
      keys.push(typeof k === "string" ? k : null);
      req.resume();
      res.statusCode = 202;
      res.end(JSON.stringify({ dispatchId: `run_${keys.length}`, stamped: 3, stamping: false }));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ error: { code: "not_found", message: "Not found" } }));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys };
}

function context(url: string): CliContext & { out: () => string } {
  const stdout = new PassThrough();
  let text = "";
  stdout.on("data", (c: Buffer) => {
    text += c.toString();
  });
  return {
    env: { CELLFLOW_URL: url, CELLFLOW_API_KEY: "cf_test" },
    stdout,
    stderr: new PassThrough(),
    interrupted: new AbortController().signal,
    claimInterrupt: () => {},
    out: () => text,
  };
}

describe("cellflow run", () => {
  it("sends an Idempotency-Key of its own with each invocation's run request", async () => {
    const { url, keys } = await serve();
    for (const n of [1, 2]) {
      const ctx = context(url);
      expect(await runCommand(["Numbers", "--group", "G", "--mode", "all"], ctx)).toEqual({
        ok: true,
        value: undefined,
      });
      expect(ctx.out()).toBe(`run run_${n} started: 3 cells\n`);
    }
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });
});
