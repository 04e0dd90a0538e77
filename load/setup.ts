/**
 * The load script's world: processes it starts (the API server, workers), the tenant and
 * the tables it loads. Every process is started in its own group and stopped by its id.
 */
import type { ChildProcess } from "node:child_process";
import { type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { type CellflowClient, cellflowClient } from "@/client/cellflow-client";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { sleep } from "@/domain/sleep";
import { generateApiKey } from "@/store/api-keys/keys";
import { registerApiKey } from "@/store/api-keys/register";
import { sequenceEvents } from "@/store/events/sequence";
import { createWorkspace } from "@/store/workspaces/create";
import { spawnScript, untilPrinted } from "../test/helpers/child-scripts";

export interface Child {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `node --import tsx <script>` and resolves once its output contains `ready`. */
export async function startChild(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<Child & { match: RegExpExecArray }> {
  // Keep only the tail: a long run's warnings must not grow without bound.
  const p = spawnScript(script, env, { tailChars: 20_000 });
  const stop = async () => {
    const killer = setTimeout(() => void p.kill("SIGKILL"), 20_000);
    await p.kill("SIGTERM");
    clearTimeout(killer);
  };
  const match = await untilPrinted(p, ready, 10 * 60_000);
  return { child: p.child, match, output: p.output, stop };
}

/** A pro-plan workspace (window 50) and an API key for it. */
export async function tenant(database: Database): Promise<string> {
  const ws = await createWorkspace(database.db, "load", "pro");
  const apiKey = generateApiKey();
  const registered = await registerApiKey(database.db, {
    workspaceId: ws.id,
    key: apiKey,
    label: "load script",
  });
  if (!registered.ok) throw new Error("could not register the load script's key");
  return apiKey;
}

/** A little work per cell: a few JSONata steps over the row, like a compose would. */
const compose = (label: string): WorkflowDefinition => ({
  inputs: [{ name: "n", type: "number", required: true }],
  blocks: [
    { id: "square", type: "transform", expression: "inputs.n * inputs.n", next: "text" },
    {
      id: "text",
      type: "transform",
      expression: `'${label}-' & $string(blocks.square) & '-' & $uppercase($substring($string(inputs.n * 7919), 0, 4))`,
    },
  ],
});

export interface Api {
  port: number;
  key: string;
  /** The typed API client, keyed for the load tenant. */
  client: CellflowClient;
}

export function api(port: number, key: string): Api {
  return {
    port,
    key,
    client: cellflowClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key }),
  };
}

/** The answer's data; a failed call stops the load run with the API's answer. */
export function answered<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined)
    throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}

/** Creates the workflows once and a table with two groups over `rows` rows; its id. */
export async function loadTable(
  a: Api,
  name: string,
  rows: number,
  workflowIds?: [string, string],
): Promise<{ tableId: string; workflowIds: [string, string] }> {
  const ids =
    workflowIds ??
    ((await Promise.all(
      ["a", "b"].map(async (label) => {
        const r = await a.client.POST("/api/workflows", {
          body: { name: `compose-${label}`, definition: compose(label) },
        });
        return answered("workflow", r).id;
      }),
    )) as [string, string]);
  const group = (id: string, workflowId: string, out: string) => ({
    id,
    name: id,
    kind: "workflow" as const,
    workflowId,
    inputs: { n: "n" },
    outputs: [{ columnId: out, from: "text" }],
  });
  const t = await a.client.POST("/api/tables", {
    body: {
      name,
      columns: [
        { id: "n", name: "N", type: "number" },
        { id: "note", name: "Note", type: "text" },
        { id: "a", name: "A", type: "text" },
        { id: "b", name: "B", type: "text" },
      ],
      groups: [group("ga", ids[0], "a"), group("gb", ids[1], "b")],
    },
  });
  const tableId = answered("table", t).id;
  for (let i = 0; i < rows; i += 1000) {
    const page = Array.from({ length: Math.min(1000, rows - i) }, (_, k) => ({
      data: { n: i + k, note: "seed" },
    }));
    const r = await a.client.POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: page },
    });
    answered("rows", r);
  }
  return { tableId, workflowIds: ids };
}

/** Starts a run of every cell and waits for it; cells per second from request to done. */
export async function timedRun(
  a: Api,
  database: Database,
  tableId: string,
  cells: number,
): Promise<{ dispatchId: string; seconds: number; cellsPerSec: number; status: string }> {
  const started = performance.now();
  const run = await a.client.POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  // 202 answers the run started (a dry run would answer 200 with figures instead).
  if (run.response.status !== 202 || !run.data || !("dispatchId" in run.data))
    throw new Error(`run: ${run.response.status} ${JSON.stringify(run.error)}`);
  const { dispatchId } = run.data;
  let status = "active";
  while (status === "active") {
    await sleep(200);
    const [d] = await queryRows<{ status: string }>(
      database.db,
      sql`select status::text as status from dispatches where id = ${dispatchId}`,
    );
    status = d?.status ?? "missing";
  }
  const seconds = (performance.now() - started) / 1000;
  return { dispatchId, seconds, cellsPerSec: cells / seconds, status };
}

/** Sequences the table's events and answers the newest position. */
export async function sequencedUpTo(database: Database, tableId: string): Promise<number> {
  await sequenceEvents(database.db, tableId);
  const [row] = await queryRows<{ seq: number }>(
    database.db,
    sql`select coalesce(max(seq), 0)::bigint as seq from events where table_id = ${tableId}`,
  );
  return row?.seq ?? 0;
}

export async function eventIds(
  database: Database,
  tableId: string,
  after: number,
): Promise<number[]> {
  await sequenceEvents(database.db, tableId);
  const rows = await queryRows<{ seq: number }>(
    database.db,
    sql`select seq from events where table_id = ${tableId} and seq > ${after} order by seq`,
  );
  return rows.map((r) => r.seq);
}

/** Cells that did not end `completed` (the run's own correctness under load). */
export async function notCompleted(database: Database, tableId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    database.db,
    sql`select count(*)::int as n from cells where table_id = ${tableId} and status <> 'completed'`,
  );
  return row?.n ?? 0;
}
