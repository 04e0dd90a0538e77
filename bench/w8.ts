/**
 * W8: a waterfall through real cells. A table of `rows` rows whose one group is a
 * waterfall of three paid steps, each an enrichment of this process (added for the
 * benchmark: the built-ins share their providers) over its own loopback provider, so
 * each has its own shared rate limit (`<workspace>:w8_provider_<k>`, at `limitPerSec`).
 * Step 1 answers four rows in ten, step 2 three of the other six, step 3 the rest
 * (`w8StepOf`). The run is judged against what a waterfall must do: calls per step (a
 * step is called only where no earlier one answered), credits (each answer at its
 * step's cost, nothing else), every cell `ok` won by the expected step; the achieved
 * rate of each step's calls comes from the limiter's grants in the cells' details, and
 * no second holds more grants of a step than its limit (it throws otherwise).
 */
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { LocalBackend } from "@/backends/local";
import { log } from "@/config/log";
import { TableSchema } from "@/contracts/table";
import { startRun } from "@/engine/dispatcher";
import { addHarnessEnrichment } from "@/enrichments/registry";
import { type Enrichment, ProviderError } from "@/enrichments/types";
import { startWorker } from "@/server/worker-runtime";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { usageSummary } from "@/store/usage/read";
import { createWorkspace } from "@/store/workspaces/create";
import { startEndpoint } from "../test/helpers/endpoint";
import { maxInAnyWindow } from "../test/helpers/pacers";
import { benchDatabase, checkTerminalOnce, waitForDispatch } from "./setup";
import { achievedPerSec, ratioOf, w8Answers, w8Expected, w8StepOf } from "./w8-figures";

/** Each step's price (credits per answer). */
export const W8_COSTS: [number, number, number] = [3, 2, 1];

export interface W8Step {
  step: number;
  calls: number;
  expectedCalls: number;
  credits: number;
  expectedCredits: number;
  achievedPerSec: number;
  limitPerSec: number;
  maxInAnySecond: number;
}

export interface W8Result {
  rows: number;
  limitPerSec: number;
  seconds: number;
  credits: number;
  expectedCredits: number;
  creditsRatio: number;
  steps: W8Step[];
}

const Inputs = z.object({ row: z.string() });

/** Step `k`'s enrichment: its provider asks `/p<k>?row=` of the loopback site. */
function stepEnrichment(k: 1 | 2 | 3, siteUrl: string): Enrichment<z.infer<typeof Inputs>> {
  return {
    id: `w8_step${k}`,
    name: `W8 step ${k}`,
    description: "The W8 benchmark's loopback provider",
    cost: W8_COSTS[k - 1] ?? 0,
    inputs: [{ id: "row", type: "text", required: true, description: "The row's number" }],
    schema: Inputs,
    outputs: [{ id: "value", type: "text", description: "Which step answered" }],
    needsSecrets: false,
    providers: () => [
      {
        id: `w8_provider_${k}`,
        async lookup(inputs, call) {
          const res = await fetch(`${siteUrl}/p${k}?row=${inputs.row}`, { signal: call.signal });
          const body: unknown = await res.json();
          if (res.status === 404) return null;
          if (!res.ok) throw new ProviderError(`HTTP ${res.status}`);
          return body as Record<string, unknown>;
        },
      },
    ],
  };
}

export async function w8(
  adminUrl: string,
  rows: number,
  limitPerSec: number,
  concurrency = 50,
): Promise<W8Result> {
  const site = await startEndpoint();
  for (const k of [1, 2, 3] as const) {
    site.on(`/p${k}`, async (hit) =>
      w8StepOf(Number(hit.query.get("row"))) === k
        ? { status: 200, body: { value: `step ${k}` } }
        : { status: 404, body: { error: "not here" } },
    );
    addHarnessEnrichment(stepEnrichment(k, site.url));
  }
  const previousLimit = process.env.CELLFLOW_RATE_LIMIT_PER_SECOND;
  process.env.CELLFLOW_RATE_LIMIT_PER_SECOND = String(limitPerSec);
  const { url, database } = await benchDatabase(adminUrl);
  const db = database.db;
  const worker = await startWorker({ url, driver: "pg", concurrency, log: log() });
  const backend = new LocalBackend(url);
  try {
    const ws = await createWorkspace(db, "w8", "unlimited");
    const table = await createTable(db, ws.id, {
      name: "w8",
      schema: TableSchema.parse({
        columns: [
          { id: "row", name: "row", type: "text" },
          { id: "value", name: "value", type: "text" },
        ],
        groups: [
          {
            id: "w",
            name: "Waterfall",
            kind: "waterfall",
            steps: ([1, 2, 3] as const).map((k) => ({
              enrichmentId: `w8_step${k}`,
              inputs: { row: "row" },
              outputs: { value: "value" },
            })),
            outputs: [{ columnId: "value", from: "value" }],
          },
        ],
      }),
    });
    for (let i = 0; i < rows; i += 1000) {
      const page = Array.from({ length: Math.min(1000, rows - i) }, (_, j) => ({
        row: String(i + j),
      }));
      await insertRows(db, table.id, page);
    }
    site.hits.length = 0;
    const started = performance.now();
    const run = await startRun(
      { db, backend },
      {
        tableId: table.id,
        groupIds: ["w"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: concurrency * 2,
      },
    );
    await waitForDispatch(database, run.dispatchId, 100);
    const seconds = (performance.now() - started) / 1000;
    await checkTerminalOnce(database, table.id, rows);
    return await judge(database.db, {
      tableId: table.id,
      workspaceId: ws.id,
      rows,
      limitPerSec,
      seconds,
      site,
    });
  } finally {
    await worker.stop();
    await backend.close();
    await database.close();
    await site.close();
    if (previousLimit === undefined) delete process.env.CELLFLOW_RATE_LIMIT_PER_SECOND;
    else process.env.CELLFLOW_RATE_LIMIT_PER_SECOND = previousLimit;
  }
}

/** The measured figures against the expected ones; throws where the waterfall broke a rule. */
async function judge(
  db: Parameters<typeof usageSummary>[0],
  r: {
    tableId: string;
    workspaceId: string;
    rows: number;
    limitPerSec: number;
    seconds: number;
    site: Awaited<ReturnType<typeof startEndpoint>>;
  },
): Promise<W8Result> {
  const expected = w8Expected(w8Answers(r.rows), W8_COSTS);
  const cells = await queryRows<{ outcome: string | null; winner: number | null; pos: number }>(
    db,
    sql`select c.outcome::text as outcome, (c.details->>'winner')::int as winner, r.position as pos
          from cells c join rows r on r.id = c.row_id where c.table_id = ${r.tableId}`,
  );
  const wrong = cells.filter((c) => c.outcome !== "ok" || c.winner !== w8StepOf(c.pos));
  if (wrong.length > 0)
    throw new Error(
      `W8: ${wrong.length} cells not won by their step (${JSON.stringify(wrong[0])})`,
    );
  const grants = await queryRows<{ step: number; at: string }>(
    db,
    sql`select (s->>'step')::int as step, s->'providers'->0->'rateLimit'->>'at' as at
          from cells c, jsonb_array_elements(c.details->'steps') s
         where c.table_id = ${r.tableId} and s->>'status' <> 'not_called'`,
  );
  const usage = await usageSummary(db, r.workspaceId);
  if (usage?.reserved !== 0) throw new Error(`W8: credits left reserved (${usage?.reserved})`);
  const steps = ([1, 2, 3] as const).map((k): W8Step => {
    const at = grants.filter((g) => g.step === k && g.at !== null).map((g) => Number(g.at));
    const maxInAnySecond = maxInAnyWindow(at, 1000);
    if (maxInAnySecond > r.limitPerSec)
      throw new Error(
        `W8: step ${k} had ${maxInAnySecond} grants in one second, limit ${r.limitPerSec}`,
      );
    return {
      step: k,
      calls: r.site.hitsOf(`/p${k}`).length,
      expectedCalls: expected.calls[k - 1] ?? 0,
      credits: usage.bySource.find((s) => s.source === `w8_step${k}@step${k}`)?.credits ?? 0,
      expectedCredits: expected.creditsByStep[k - 1] ?? 0,
      achievedPerSec: +achievedPerSec(at).toFixed(2),
      limitPerSec: r.limitPerSec,
      maxInAnySecond,
    };
  });
  return {
    rows: r.rows,
    limitPerSec: r.limitPerSec,
    seconds: +r.seconds.toFixed(1),
    credits: usage.used,
    expectedCredits: expected.credits,
    creditsRatio: +ratioOf(usage.used, expected.credits).toFixed(3),
    steps,
  };
}
