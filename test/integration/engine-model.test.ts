/**
 * The engine's promises under concurrency, checked as a model: in each schedule several
 * actors run the real engine operations at once on real Postgres — runs stamped across
 * page boundaries, Stops at every scope, carriers through the real row step, re-drive
 * passes, resumes of paused cells, edits that re-arm, Stops with a `where`, runs with a
 * credit cap that halts them — and fast-check's scheduler picks the order in which they
 * pass the engine's race points and in which the paid group's provider answers. Afterwards
 * the audited history (commit order) is judged against I1–I5 (test/helpers/model-judge.ts)
 * and the ledger against I6 (test/helpers/model-money.ts; docs/engine-invariants.md), and
 * the progress counters, per group and per run, against a full count of the cells, before
 * a fold (base + deltas) and after one (test/helpers/progress.ts). In some schedules the
 * paid group has a run condition (`runIf`: `a` not empty): its cells that end
 * `condition_not_met` are judged against the row's `a` (checkRunConditions).
 * `MODEL_RUNS` sets how many schedules (default 200); `MODEL_SEED` replays a failure's
 * seed (its interleavings; the database's own timing may still differ).
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { carrierSpec, type EnqueueSpec, type TaskBackend } from "@/backends/port";
import type { Schemas } from "@/client/cellflow-client";
import { log } from "@/config/log";
import { TableSchema } from "@/contracts/table";
import { upstreamGroups } from "@/domain/table-schema";
import type { TypedCondition } from "@/domain/where";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import type { Pause } from "@/engine/race-points";
import { redriveOrphans } from "@/engine/redrive";
import { runStamper } from "@/engine/stamper";
import { stopRuns } from "@/engine/stop";
import { patchRow } from "@/services/rows";
import { resumeCell } from "@/store/cells/resume";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps, redriveEngine } from "../helpers/engine";
import { taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { auditedHistory, installModelAudit, serverClock } from "../helpers/model-audit";
import { checkRunConditions, judge, type StopMade, type StopScope } from "../helpers/model-judge";
import {
  type BlockRecord,
  type Counters,
  checkCharges,
  type LedgerEntry,
  type ProviderAnswer,
} from "../helpers/model-money";
import { counterFindings } from "../helpers/progress";

const RUNS = Number(process.env.MODEL_RUNS ?? 200);
// No result cache: a paid block's checkpoint does not say whether its answer came from the
// cache, so with it on the judge could not tell a recorded answer from a free one. (Cache
// hits are never charged: credits-answers.test.ts, enrichment-cache.test.ts.)
process.env.CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS = "0";
const ROWS = 5;
const GROUPS = ["ga", "gb", "gp", "gm"] as const;
/** gm's price: company_lookup's cost, in milli-credits. */
const COST_MILLI = 5_000;
/** What the provider answers for each row's domain (by row index). */
const ROW_ANSWERS = ["found", "found", "not_found", "error", "found"] as const;
const PAGE_ROWS = 2;
const SYNC_ROWS = 2;
const WINDOW = 2;

let key: string;
let workspaceId: string;
let workflows: { quick: string; approval: string };
const db = () => getDatabase().db;

/**
 * The paid group's provider: a loopback server whose every answer waits for the
 * schedule's turn (so a Stop, a re-drive or an edit can land while a call is out, or
 * between its answer and the write that records it), and logs what it answered.
 */
let provider: { url: string; close(): Promise<void> };
let current: World | undefined;

async function startProvider(): Promise<typeof provider> {
  const server = http.createServer((req, res) => {
    const domain = new URL(req.url ?? "/", "http://x").searchParams.get("domain") ?? "";
    const world = current;
    const answer = async () => {
      await world?.s.schedule(Promise.resolve(), `provider ${domain}`);
      // `<answer>-<row>.<table>.example`: what to answer, for which row.
      const [kind, row] = (domain.split(".")[0] ?? "").split("-");
      const rowId = world?.rowIds[Number(row)] ?? "";
      if (kind === "found") {
        world?.answers.push({ rowId, kind: "found" });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ name: `Company ${row}` }));
      } else if (kind === "none") {
        world?.answers.push({ rowId, kind: "not_found" });
        res.writeHead(404).end();
      } else {
        world?.answers.push({ rowId, kind: "error" });
        res.writeHead(500).end();
      }
    };
    void answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  await useTestDatabase();
  await installModelAudit(db());
  const ws = await newWorkspace();
  key = ws.key;
  workspaceId = ws.id;
  // Caps come from the runs' own `maxCredits` (halts), not from the month running out.
  await db().execute(sql`update workspaces set plan = 'unlimited' where id = ${workspaceId}`);
  provider = await startProvider();
  const secret = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
    body: { value: provider.url },
  });
  expect(secret.response.status).toBe(200);
  const wf = async (blocks: Schemas["Block"][]) =>
    dataOf(
      await apiClient(key).POST("/api/workflows", { body: { name: "m", definition: { blocks } } }),
    ).id;
  workflows = {
    quick: await wf([{ id: "out", type: "transform", expression: "'v'" }]),
    approval: dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: {
          name: "m",
          definition: {
            inputs: [{ name: "d", type: "text", required: false }],
            blocks: [
              {
                id: "look",
                type: "enrichment",
                enrichmentId: "company_lookup",
                inputs: { domain: "inputs.d" },
                next: "ask",
              },
              { id: "ask", type: "approval", prompt: "ok?", next: "out" },
              { id: "out", type: "transform", expression: "'p'" },
            ],
          },
        },
      }),
    ).id,
  };
});

afterAll(() => provider.close());

/**
 * ga (manual) → a; gb (auto-run on a) → b; gp (manual: a paid company_lookup block on d,
 * then waits for an approval) → p; gm (manual, paid: company_lookup on d) → m, with
 * `runIf` only where `a` is not empty. The provider answers each row's domain as
 * ROW_ANSWERS says.
 */
async function modelTable(
  runIf: boolean,
): Promise<{ tableId: string; rowIds: string[]; schema: TableSchema }> {
  const group = (id: string, workflowId: string, column: string, autoOn?: string) => ({
    id,
    name: id,
    kind: "workflow" as const,
    workflowId,
    outputs: [{ columnId: column, from: "out" }],
    autoRun: autoOn !== undefined,
    dependsOn: autoOn ? [autoOn] : [],
  });
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "model",
      columns: ["a", "b", "p", "d", "m"].map((id) => ({ id, name: id, type: "text" as const })),
      groups: [
        group("ga", workflows.quick, "a"),
        group("gb", workflows.quick, "b", "a"),
        { ...group("gp", workflows.approval, "p"), inputs: { d: "d" } },
        {
          id: "gm",
          name: "gm",
          kind: "enrichment" as const,
          enrichmentId: "company_lookup",
          inputs: { domain: "d" },
          outputs: [{ columnId: "m", from: "name" }],
          ...(runIf ? { runIf: [{ column: "a", op: "not_empty" as const }] } : {}),
        },
      ],
    },
  });
  // A domain of its own per table, so only a row's earlier answers are in the cache.
  const label = dataOf(t).id.replace(/_/g, "-").toLowerCase();
  const domain = (i: number) =>
    `${{ found: "found", not_found: "none", error: "fail" }[ROW_ANSWERS[i] ?? "error"]}-${i}.${label}.example`;
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(t).id } },
    body: { rows: Array.from({ length: ROWS }, (_, i) => ({ data: { d: domain(i) } })) },
  });
  const [table] = await queryRows<{ schema: unknown }>(
    db(),
    sql`select schema from tables where id = ${dataOf(t).id}`,
  );
  return {
    tableId: dataOf(t).id,
    rowIds: dataOf(ins).rows.map((r) => r.id),
    schema: TableSchema.parse(table?.schema),
  };
}

type Actor =
  | {
      kind: "run";
      mode: "all" | "incomplete" | "new";
      groups: string[];
      rows: number[] | null;
      limit: number | null;
      /** A credit cap on the run: its paid calls past it halt it. */
      maxCredits: number | null;
      /** A budget per row: a paid call past it ends its cell over_budget. */
      maxCreditsPerRow: number | null;
    }
  | {
      kind: "stop";
      scope: "table" | "run" | "rows" | "groups" | "cell" | "where";
      rows: number[];
      group: number;
    }
  | { kind: "redrive" }
  | { kind: "resume"; pick: number }
  | { kind: "edit"; row: number; value: string };

const rowIndexes = fc.uniqueArray(fc.integer({ min: 0, max: ROWS - 1 }), {
  minLength: 1,
  maxLength: 3,
});
const actorArb: fc.Arbitrary<Actor> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("run" as const),
      mode: fc.constantFrom("all" as const, "incomplete" as const, "new" as const),
      groups: fc.subarray([...GROUPS], { minLength: 1 }),
      rows: fc.option(rowIndexes, { nil: null }),
      limit: fc.option(fc.integer({ min: 1, max: ROWS }), { nil: null, freq: 4 }),
      maxCredits: fc.option(fc.constantFrom(5, 10), { nil: null, freq: 5 }),
      maxCreditsPerRow: fc.option(fc.constantFrom(5, 7.5), { nil: null, freq: 4 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("stop" as const),
      scope: fc.constantFrom(
        "table" as const,
        "run" as const,
        "rows" as const,
        "groups" as const,
        "cell" as const,
        "where" as const,
      ),
      rows: rowIndexes,
      group: fc.integer({ min: 0, max: GROUPS.length - 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "redrive" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("edit" as const),
      row: fc.integer({ min: 0, max: ROWS - 1 }),
      value: fc.constantFrom("x", ""),
    }),
  },
);

/** The workspace's counters and the table's capped runs', with what the ledger says. */
async function counters(tableId: string): Promise<Counters> {
  const [w] = await queryRows<Omit<Counters, "runs">>(
    db(),
    sql`select w.reserved_milli::int as "reservedMilli",
               (case when w.credits_month = date_trunc('month', now() at time zone 'utc')::date
                     then w.used_milli else 0 end)::int as "usedMilli",
               (select coalesce(sum(u.milli), 0) from usage u
                 where u.workspace_id = w.id and u.state = 'charged'
                   and u.charged_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc')::int
                 as "ledgerUsedMilli"
          from workspaces w where w.id = ${workspaceId}`,
  );
  const runs = await queryRows<Counters["runs"][number]>(
    db(),
    sql`select d.id, d.committed_milli::int as "committedMilli",
               (select coalesce(sum(u.milli), 0) from usage u
                 where u.dispatch_id = d.id and u.state = 'charged')::int as "chargedMilli"
          from dispatches d where d.table_id = ${tableId} and d.max_credits_milli is not null`,
  );
  // What each budgeted run charged each row's cells of it (the cascade's, of no run, aside).
  const rowBudgets = await queryRows<NonNullable<Counters["rowBudgets"]>[number]>(
    db(),
    sql`select d.id, d.max_credits_per_row_milli::int as "maxMilli",
               coalesce((select jsonb_agg(jsonb_build_object('rowId', r.row_id, 'chargedMilli', r.m))
                           from (select u.row_id, sum(u.milli)::int as m from usage u
                                  where u.dispatch_id = d.id and u.state = 'charged'
                                  group by u.row_id) r), '[]'::jsonb) as rows
          from dispatches d where d.table_id = ${tableId} and d.max_credits_per_row_milli is not null`,
  );
  return {
    reservedMilli: w?.reservedMilli ?? -1,
    usedMilli: w?.usedMilli ?? -1,
    ledgerUsedMilli: w?.ledgerUsedMilli ?? -1,
    runs,
    rowBudgets,
  };
}

/** One schedule's world: its table, the jobs its actors enqueued, the Stops they made. */
class World {
  readonly jobs: Promise<void>[] = [];
  readonly runs: string[] = [];
  readonly stops: StopMade[] = [];
  readonly runKnown: Record<string, number> = {};
  /** What the paid group's provider answered in this schedule. */
  readonly answers: ProviderAnswer[] = [];
  readonly pause: Pause;
  readonly backend: TaskBackend;

  constructor(
    readonly s: fc.Scheduler,
    readonly tableId: string,
    readonly rowIds: string[],
  ) {
    this.pause = async (point, detail) => {
      if (point === "run:created" && detail?.dispatchId)
        this.runKnown[detail.dispatchId] = await serverClock(db());
      await s.schedule(Promise.resolve(), `${point} ${JSON.stringify(detail ?? {})}`);
    };
    this.backend = {
      kind: "local",
      remoteCancel: false,
      enqueue: async (specs) => {
        for (const spec of specs) this.jobs.push(this.job(spec));
      },
      cancelRun: async () => ({ ok: true, value: "gone" }),
      close: async () => {},
    };
  }

  /** A worker takes the job whenever the scheduler lets it. */
  private async job(spec: EnqueueSpec): Promise<void> {
    await this.s.schedule(Promise.resolve(), `start ${spec.task} ${spec.idempotencyKey}`);
    if (spec.task === "row-carrier")
      await runCarrier(
        engineDeps({ backend: this.backend, pause: this.pause }),
        spec.payload,
        taskContext(),
      );
    else if (spec.task === "stamp-dispatch")
      await runStamper(
        { database: getDatabase(), backend: this.backend },
        spec.payload,
        taskContext(),
        {
          pageRows: PAGE_ROWS,
          pause: this.pause,
        },
      );
  }

  /**
   * The actor starts after `delay` of the scheduler's steps, so it can land mid-flow. Each
   * step is a round trip to the database first, as a flow's steps are: free steps were all
   * taken while the flows waited on their first statement, so an actor almost always
   * started before any run existed (a Stop landing between a run's pages, issue 29's
   * finding 2, was never drawn in 1,100 schedules; with the round trips, once in ~400).
   */
  async act(a: Actor, delay: number): Promise<void> {
    for (let i = 0; i <= delay; i++) {
      await db().execute(sql`select 1`);
      await this.s.schedule(Promise.resolve(), `actor ${a.kind}`);
    }
    const rows = (ix: number[]) => ix.map((i) => this.rowIds[i] as string);
    switch (a.kind) {
      case "run": {
        const run = await startRun(
          { db: db(), backend: this.backend, pause: this.pause },
          {
            tableId: this.tableId,
            groupIds: a.groups,
            mode: a.mode,
            rowIds: a.rows ? rows(a.rows) : null,
            limit: a.limit,
            ...(a.maxCredits !== null ? { maxCredits: a.maxCredits } : {}),
            ...(a.maxCreditsPerRow !== null ? { maxCreditsPerRow: a.maxCreditsPerRow } : {}),
            window: WINDOW,
            pageRows: PAGE_ROWS,
            syncRows: SYNC_ROWS,
          },
        );
        this.runs.push(run.dispatchId);
        return;
      }
      case "stop": {
        const group = GROUPS[a.group] as string;
        const run = this.runs.at(-1);
        const scope: StopScope =
          a.scope === "rows"
            ? { rowIds: rows(a.rows) }
            : a.scope === "groups"
              ? { groupIds: [group] }
              : a.scope === "cell"
                ? { rowIds: rows(a.rows.slice(0, 1)), groupIds: [group] }
                : a.scope === "run" && run
                  ? { dispatchId: run }
                  : {};
        const t0 = await serverClock(db());
        if (a.scope === "where") {
          // On a column the edits and group ga change (every group); or on a group's cell, for
          // that group (queued, or none yet: the rows a run still stamping has not reached).
          const onColumn = (a.rows[0] ?? 0) % 2 === 0;
          const where: TypedCondition[] = onColumn
            ? [{ column: "a", type: "text", op: "empty" }]
            : [{ group, status: a.rows.length > 1 ? "queued" : null }];
          const groupIds = onColumn ? undefined : [group];
          await stopRuns(
            { db: db(), backend: this.backend, pause: this.pause },
            { tableId: this.tableId, where, ...(groupIds ? { groupIds } : {}) },
          );
          // The judge holds the Stop to the rows it matched (what it covers is its own
          // record; which rows a condition matches is where-filters.test.ts's subject).
          const matched = await queryRows<{ rowId: string }>(
            db(),
            sql`select r.id as "rowId" from stop_ranges sr
                  join rows r on r.table_id = ${this.tableId} and r.position between sr.lo and sr.hi
                 where sr.seq = (select max(seq) from stops where table_id = ${this.tableId} and matched)`,
          );
          const covered: StopScope = {
            rowIds: matched.map((m) => m.rowId),
            ...(groupIds ? { groupIds } : {}),
          };
          this.stops.push({ scope: covered, t0, t1: await serverClock(db()) });
          return;
        }
        await stopRuns(
          { db: db(), backend: this.backend, pause: this.pause },
          { tableId: this.tableId, ...scope },
        );
        this.stops.push({ scope, t0, t1: await serverClock(db()) });
        return;
      }
      case "redrive":
        await redriveOrphans(
          redriveEngine({ database: getDatabase(), backend: this.backend, pause: this.pause }),
        );
        return;
      case "resume": {
        const paused = await queryRows<{ rowId: string; groupId: string; executionId: string }>(
          db(),
          sql`select row_id as "rowId", group_id as "groupId", execution_id as "executionId"
                from cells where table_id = ${this.tableId} and status = 'paused' order by row_position`,
        );
        const cell = paused[a.pick % Math.max(paused.length, 1)];
        if (!cell) return;
        const resumed = await resumeCell(db(), {
          tableId: this.tableId,
          ...cell,
          data: { approval: { ok: true } },
        });
        if (resumed.ok)
          await this.backend.enqueue([carrierSpec({ tableId: this.tableId, rowId: cell.rowId })]);
        return;
      }
      case "edit": {
        const before = new Set(await this.runIds());
        await patchRow(
          { db: db(), workspaceId, log: log(), backend: this.backend },
          this.tableId,
          this.rowIds[a.row] as string,
          { data: { a: a.value === "" ? null : a.value } },
        );
        const now = await serverClock(db());
        for (const id of await this.runIds()) if (!before.has(id)) this.runKnown[id] = now;
        return;
      }
    }
  }

  private async runIds(): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      db(),
      sql`select id from dispatches where table_id = ${this.tableId}`,
    );
    return rows.map((r) => r.id);
  }

  /** Waits for every job, including the ones jobs enqueue, to finish. */
  async drain(): Promise<void> {
    for (let seen = -1; seen !== this.jobs.length; ) {
      seen = this.jobs.length;
      await this.s.waitFor(Promise.all(this.jobs));
    }
  }
}

describe("engine model", () => {
  it(
    `concurrent runs, Stops, carriers, re-drives, resumes, edits and halts keep I1–I6 (${RUNS} schedules)`,
    async () => {
      let schedules = 0;
      const stats = {
        steps: 0,
        cells: 0,
        stops: 0,
        jobs: 0,
        answers: 0,
        charged: 0,
        halted: 0,
        conditionNotMet: 0,
        ends: {} as Record<string, number>,
      };
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(fc.tuple(actorArb, fc.nat({ max: 15 })), { minLength: 2, maxLength: 8 }),
          fc.boolean(),
          async (s, actors, runIf) => {
            schedules++;
            const { tableId, rowIds, schema } = await modelTable(runIf);
            const world = new World(s, tableId, rowIds);
            current = world;
            await s.waitFor(Promise.all(actors.map(([a, delay]) => world.act(a, delay))));
            await world.drain();
            const finalCells = await queryRows<{ rowId: string; groupId: string; status: string }>(
              db(),
              sql`select row_id as "rowId", group_id as "groupId", status::text as status
                  from cells where table_id = ${tableId}`,
            );
            const finalRuns = await queryRows<{ id: string; status: string }>(
              db(),
              sql`select id, status::text as status from dispatches where table_id = ${tableId}`,
            );
            const runGroups = Object.fromEntries(
              (
                await queryRows<{ id: string; groups: string[] }>(
                  db(),
                  sql`select id, group_ids as groups from dispatches where table_id = ${tableId}`,
                )
              ).map((d) => [d.id, d.groups]),
            );
            const records = await auditedHistory(db(), tableId);
            const ledger = await queryRows<LedgerEntry>(
              db(),
              sql`select execution_id as "executionId", source, state::text as state, milli::int as milli,
                         row_id as "rowId"
                    from usage where table_id = ${tableId}`,
            );
            const findings = judge(
              {
                records,
                stops: world.stops,
                upstream: Object.fromEntries(GROUPS.map((g) => [g, upstreamGroups(schema, g)])),
                runGroups,
                runKnown: world.runKnown,
              },
              finalCells,
              finalRuns,
            );
            const blockRecords = await queryRows<BlockRecord>(
              db(),
              sql`select id as "executionId", resumes,
                         (checkpoints->'look'->'output'->>'name') is not null as answered
                    from executions where table_id = ${tableId} and group_id = 'gp'`,
            );
            findings.push(
              ...checkCharges({
                source: "company_lookup",
                costMilli: COST_MILLI,
                ledger,
                ends: records
                  .filter(
                    (r) => r.kind === "cell" && r.groupId === "gm" && r.status === "completed",
                  )
                  .map((r) => ({
                    rowId: r.rowId ?? "",
                    executionId: r.executionId ?? "",
                    outcome: r.outcome ?? null,
                    cached: r.cached ?? false,
                  })),
                answers: world.answers,
                block: { source: "company_lookup@look", records: blockRecords },
                counters: await counters(tableId),
              }),
            );
            findings.push(
              ...checkRunConditions(await auditedHistory(db(), tableId, { rows: true }), {
                groupId: "gm",
                column: "a",
                runIf,
              }),
            );
            stats.conditionNotMet += records.filter(
              (r) => r.kind === "cell" && r.outcome === "condition_not_met",
            ).length;
            findings.push(...(await counterFindings(db(), tableId)));
            stats.charged += ledger.filter((e) => e.state === "charged").length;
            stats.answers += world.answers.length;
            stats.halted += finalRuns.filter((r) => r.status === "halted").length;
            stats.steps += s.report().length;
            stats.cells += finalCells.length;
            stats.stops += world.stops.length;
            stats.jobs += world.jobs.length;
            for (const c of finalCells) stats.ends[c.status] = (stats.ends[c.status] ?? 0) + 1;
            if (findings.length > 0 && process.env.MODEL_DEBUG)
              console.error(
                JSON.stringify(
                  { actors, stops: world.stops, runs: world.runs, rowIds, records },
                  null,
                  1,
                ),
              );
            expect(findings, `${s.report().length} scheduled steps`).toEqual([]);
          },
        ),
        {
          numRuns: RUNS,
          endOnFailure: true,
          ...(process.env.MODEL_SEED ? { seed: Number(process.env.MODEL_SEED) } : {}),
        },
      );
      expect(schedules).toBe(RUNS);
      // What the schedules exercised, for the note and for a reader wondering if they did.
      console.info(`engine model: ${schedules} schedules`, JSON.stringify(stats));
    },
    120_000 + RUNS * 300,
  );
});
