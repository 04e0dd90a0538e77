/**
 * W7: an AI column under a tokens-per-minute limit. A table of `rows` rows whose one
 * workflow group is one llm block (OpenAI-compatible, model `w7-model`, temperature 0.7 so
 * the result cache never answers, each row's prompt distinct), whose calls each use
 * 101 tokens (56 in: a 13-token system prompt and a 43-token prompt naming the row; 45
 * out: the local server answers `Answer: <prompt>`) and reserve input + `maxTokens`
 * (unset: the default 1,024, so 1,080 reserved and 101 settled; BENCH_W7_MAX_TOKENS sets
 * it). Two `npm run worker` processes (concurrency 50 each, window 100) share one limiter —
 * Postgres (the database they run on) or a redis-server — at `tokensPerMinute`
 * (CELLFLOW_LLM_TOKENS_PER_MINUTE; the requests per minute set far above what the tokens
 * allow). The local LLM server (test/helpers/llm-server.ts) enforces the same tokens per
 * minute itself over a sliding 60 s window and answers 429 to any call that would go over
 * it, so an overshoot of the limiter shows as 429s. The workspace's LLM_API_KEY is a
 * sealed secret (CELLFLOW_SECRET_KEY, the same in the workers), each answered call is
 * charged its real usage at CELLFLOW_LLM_PRICES.
 *
 * Judged from the server's request records (w7-figures.ts): tokens per minute over the
 * run's span and without its first and last 10 s (a sixth of the window, the limiter's
 * sub-window), and the most tokens any 60 s window held (the warm-up's calls included:
 * they count in the same windows); the credits charged (GET /api/usage's `used`, and the
 * run's table in the ledger) against each answered call's usage at the price, rounded up
 * per call. It throws — after computing every figure, which the error carries — when a
 * call got a 429 or a window held more than the limit (over the limit), when a cell did
 * not complete `ok` exactly once (rows failed), or when the credits differ by a
 * milli-credit or something stays reserved. Within 5 % of the limit is reported, not
 * thrown. A 100-row warm-up dispatch (not measured) runs first on another table of the
 * same workspace, so the same limits.
 *
 * The goals (issue 32): 0 rows failed for rate limits; tokens per minute within 5 % of the
 * limit and never above it; credits exactly as expected. The figures measured, and why
 * the steady rate stays ~10 % under the limit when calls reserve ten times what they use
 * (the Postgres log's split says where the tokens went), are in docs/benchmarks.md.
 */
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { LocalBackend } from "@/backends/local";
import { TableSchema } from "@/contracts/table";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { DEFAULT_MAX_TOKENS, estimateTokens } from "@/domain/llm-tokens";
import { startRun } from "@/engine/dispatcher";
import { decodeSecretKey, generateSecretKey, sealSecret } from "@/security/secret-box";
import { insertRows } from "@/store/rows/insert";
import { putSecret } from "@/store/secrets/put";
import { createTable } from "@/store/tables/create";
import { usageSummary } from "@/store/usage/read";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { type ScriptProcess, startWorkerProcess } from "../test/helpers/child-scripts";
import { type LlmServer, startLlmServer } from "../test/helpers/llm-server";
import { startRedis } from "../test/helpers/redis";
import { benchDatabase, checkTerminalOnce, waitForDispatch } from "./setup";
import {
  expectedMilli,
  maxTokensInAnyWindow,
  steadyTokensPerMinute,
  tokensPerMinute,
  type W7Call,
  withinShareOf,
} from "./w7-figures";
import { sampleLlmLog, type W7LogShares } from "./w7-log";

export type W7Limiter = "redis" | "postgres";

export const W7_MODEL = "w7-model";
export const W7_PRICE = { inputPer1k: 0.5, outputPer1k: 1.5 };
const WINDOW_MS = 60_000;
/** A sixth of the window: the limiter's sub-window, the pace settling in at the start. */
const TRIM_MS = 10_000;
const WARM_UP_ROWS = 100;

export interface W7Options {
  rows: number;
  tokensPerMinute: number;
  limiter: W7Limiter;
  /** The llm block's maxTokens; undefined leaves it unset (the default 1,024). */
  maxTokens?: number;
  concurrencyPerWorker?: number;
  /** How long the local server takes to answer each call (a real model's latency); 0 by default. */
  delayMs?: number;
}

export interface W7Result {
  limiter: W7Limiter;
  rows: number;
  tokensPerMinuteLimit: number;
  maxTokens: number | null;
  /** The measured run's answered calls, and their mean tokens (in + out). */
  calls: number;
  tokensPerCall: number;
  /** Over the run's calls, first to last. */
  tokensPerMinute: number;
  /** The same without the first and last 10 s. */
  steadyTokensPerMinute: number;
  steadyShareOfLimit: number;
  withinFivePercent: boolean;
  /** The most tokens any 60 s window held (warm-up included), and its share of the limit. */
  peakTokensIn60s: number;
  peakShareOfLimit: number;
  /** 429s the server gave (warm-up included). */
  status429: number;
  rowsFailed: number;
  /** Milli-credits: GET /api/usage's `used` (warm-up included) and the run's table in the ledger. */
  chargedMilli: number;
  expectedMilli: number;
  runChargedMilli: number;
  runExpectedMilli: number;
  seconds: number;
  /** The Postgres limiter's log, sampled: where the sub-window's tokens went. */
  log?: W7LogShares;
}

const COMPANY_KINDS = ["farms..", "clinics", "schools", "ports..", "banks.."];
const CITIES = ["Oslo", "Lima", "Pune", "Kyiv", "Doha"];

/** Row `i`: every row the same length (so every call the same tokens), no two alike. */
function rowOf(i: number): { name: string; about: string } {
  return {
    name: `Company ${String(i).padStart(5, "0")}`,
    about: `We build software for ${COMPANY_KINDS[i % 5]} in ${CITIES[Math.floor(i / 5) % 5]}, since ${1950 + (i % 70)}.`,
  };
}

const SYSTEM = "You sort companies into industries. Be brief, plain.";
const PROMPT =
  "Which industry is {{ row.name }} in? It says of itself: {{ row.about }} Answer in one short sentence, naming the industry first. Thanks.";

/** What a call reserves at the limit: its input tokens (the same for every row) and its output cap. */
function reservationOf(maxTokens: number | undefined): number {
  const row = rowOf(0);
  const prompt = PROMPT.replace("{{ row.name }}", row.name).replace("{{ row.about }}", row.about);
  return estimateTokens(SYSTEM) + estimateTokens(prompt) + (maxTokens ?? DEFAULT_MAX_TOKENS);
}

function definition(baseUrl: string, maxTokens: number | undefined): WorkflowDefinition {
  return {
    inputs: [],
    blocks: [
      {
        id: "classify",
        type: "llm",
        baseUrl,
        model: W7_MODEL,
        system: SYSTEM,
        prompt: PROMPT,
        temperature: 0.7,
        ...(maxTokens !== undefined ? { maxTokens } : {}),
      },
    ],
  };
}

async function llmTable(
  db: Parameters<typeof createTable>[0],
  workspaceId: string,
  workflowId: string,
  rows: number,
  firstRow: number,
): Promise<string> {
  const table = await createTable(db, workspaceId, {
    name: `w7 from ${firstRow}`,
    schema: TableSchema.parse({
      columns: [
        { id: "name", name: "name", type: "text" },
        { id: "about", name: "about", type: "text" },
        { id: "industry", name: "industry", type: "json" },
      ],
      groups: [
        {
          id: "ai",
          name: "Industry",
          kind: "workflow",
          workflowId,
          version: "live",
          inputs: {},
          outputs: [{ columnId: "industry", from: "classify" }],
          dependsOn: [],
          autoRun: false,
        },
      ],
    }),
  });
  for (let i = 0; i < rows; i += 1000) {
    const page = Array.from({ length: Math.min(1000, rows - i) }, (_, k) =>
      rowOf(firstRow + i + k),
    );
    await insertRows(db, table.id, page);
  }
  return table.id;
}

export async function w7(adminUrl: string, o: W7Options): Promise<W7Result> {
  const concurrencyPerWorker = o.concurrencyPerWorker ?? 50;
  const redis = o.limiter === "redis" ? await startRedis() : undefined;
  const server = await startLlmServer({
    tokensPerMinute: o.tokensPerMinute,
    windowMs: WINDOW_MS,
    ...(o.delayMs ? { delayMs: o.delayMs } : {}),
  });
  const { url, database } = await benchDatabase(adminUrl);
  const workers: ScriptProcess[] = [];
  const backend = new LocalBackend(url);
  try {
    const db = database.db;
    const secretKey = generateSecretKey();
    const ws = await createWorkspace(db, "w7", "unlimited");
    await putSecret(db, {
      workspaceId: ws.id,
      name: "LLM_API_KEY",
      ciphertext: sealSecret(decodeSecretKey(secretKey) as Buffer, "sk-w7-bench"),
    });
    const wf = await createWorkflow(db, ws.id, {
      name: "w7",
      definition: definition(server.openaiBaseUrl, o.maxTokens),
    });
    const env = {
      DATABASE_URL: url,
      RATE_LIMITER: o.limiter,
      REDIS_URL: redis?.url ?? "",
      WORKER_CONCURRENCY: String(concurrencyPerWorker),
      CELLFLOW_LLM_TOKENS_PER_MINUTE: String(o.tokensPerMinute),
      // Far above what the tokens allow (~50 calls/s): only the tokens limit the pace.
      CELLFLOW_LLM_REQUESTS_PER_MINUTE: "100000",
      CELLFLOW_LLM_PRICES: JSON.stringify({ [W7_MODEL]: W7_PRICE }),
      CELLFLOW_SECRET_KEY: secretKey,
      CELLFLOW_ALLOW_PRIVATE_NETWORK: "1",
    };
    workers.push(...(await Promise.all([startWorkerProcess(env), startWorkerProcess(env)])));
    const runAll = async (tableId: string) => {
      const run = await startRun(
        { db, backend },
        {
          tableId,
          groupIds: ["ai"],
          mode: "all",
          rowIds: null,
          limit: null,
          window: concurrencyPerWorker * 2,
        },
      );
      await waitForDispatch(database, run.dispatchId, 100);
    };
    // Warm-up, not measured: the workers open their connections and compile their hot
    // paths. Rows numbered from 90,000, so no prompt repeats one of the run's.
    await runAll(await llmTable(db, ws.id, wf.id, WARM_UP_ROWS, 90_000));
    const tableId = await llmTable(db, ws.id, wf.id, o.rows, 0);
    const fromRequest = server.requests.length;
    const sampling =
      o.limiter === "postgres"
        ? sampleLlmLog(db, W7_MODEL, reservationOf(o.maxTokens), o.tokensPerMinute)
        : undefined;
    const started = performance.now();
    await runAll(tableId);
    const seconds = (performance.now() - started) / 1000;
    const log = await sampling?.();
    await checkTerminalOnce(database, tableId, o.rows);
    return await judge(database.db, server, {
      ...o,
      ...(log ? { log } : {}),
      workspaceId: ws.id,
      tableId,
      fromRequest,
      seconds,
    });
  } finally {
    await Promise.all(workers.map((w) => w.kill("SIGTERM")));
    await backend.close();
    await database.close();
    await server.close();
    await redis?.stop();
  }
}

/** Every figure, then a throw naming what went wrong, if anything did. */
async function judge(
  db: Parameters<typeof usageSummary>[0],
  server: LlmServer,
  r: W7Options & {
    workspaceId: string;
    tableId: string;
    fromRequest: number;
    seconds: number;
    log?: W7LogShares;
  },
): Promise<W7Result> {
  const answered = (from: number): W7Call[] =>
    server.requests
      .slice(from)
      .filter((q) => q.status === 200)
      .map((q) => ({ at: q.at, inputTokens: q.inputTokens, outputTokens: q.outputTokens }));
  const all = answered(0);
  const run = answered(r.fromRequest);
  const [cells] = await queryRows<{ failed: number }>(
    db,
    sql`select count(*)::int as failed from cells
         where table_id = ${r.tableId} and (status <> 'completed' or outcome is distinct from 'ok')`,
  );
  const [ledger] = await queryRows<{ milli: number }>(
    db,
    sql`select coalesce(sum(milli), 0)::bigint as milli from usage
         where table_id = ${r.tableId} and state = 'charged'`,
  );
  const usage = await usageSummary(db, r.workspaceId);
  const limit = r.tokensPerMinute;
  const steady = steadyTokensPerMinute(run, TRIM_MS);
  const peak = maxTokensInAnyWindow(all, WINDOW_MS);
  const result: W7Result = {
    limiter: r.limiter,
    rows: r.rows,
    tokensPerMinuteLimit: limit,
    maxTokens: r.maxTokens ?? null,
    calls: run.length,
    tokensPerCall: +(
      run.reduce((s, c) => s + c.inputTokens + c.outputTokens, 0) / Math.max(1, run.length)
    ).toFixed(1),
    tokensPerMinute: Math.round(tokensPerMinute(run)),
    steadyTokensPerMinute: Math.round(steady),
    steadyShareOfLimit: +(steady / limit).toFixed(4),
    withinFivePercent: withinShareOf(steady, limit, 0.05),
    peakTokensIn60s: peak,
    peakShareOfLimit: +(peak / limit).toFixed(4),
    status429: server.requests.filter((q) => q.status === 429).length,
    rowsFailed: cells?.failed ?? -1,
    chargedMilli: Math.round((usage?.used ?? -1) * 1000),
    expectedMilli: expectedMilli(all, W7_PRICE),
    runChargedMilli: Number(ledger?.milli ?? -1),
    runExpectedMilli: expectedMilli(run, W7_PRICE),
    seconds: +r.seconds.toFixed(1),
    ...(r.log ? { log: r.log } : {}),
  };
  const wrong: string[] = [];
  if (result.status429 > 0 || peak > limit)
    wrong.push(
      `over the limit: ${result.status429} calls refused 429, at most ${peak} tokens in 60 s (limit ${limit})`,
    );
  if (result.rowsFailed !== 0) wrong.push(`${result.rowsFailed} rows failed`);
  if (
    result.chargedMilli !== result.expectedMilli ||
    result.runChargedMilli !== result.runExpectedMilli
  )
    wrong.push(
      `credits not exact: charged ${result.chargedMilli} milli (the run ${result.runChargedMilli}), expected ${result.expectedMilli} (${result.runExpectedMilli})`,
    );
  if (usage?.reserved !== 0) wrong.push(`credits left reserved (${usage?.reserved})`);
  if (wrong.length > 0)
    throw new Error(`W7 (${r.limiter}): ${wrong.join("; ")}\n${JSON.stringify(result)}`);
  return result;
}
