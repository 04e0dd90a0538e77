/**
 * The engine's gate in front of llm calls (src/engine/llm-calls.ts) on real cells of an
 * llm workflow group: a call is reserved at its estimate (input tokens at the input price
 * plus its output cap at the output price) under every cap before it is made, and charged
 * its real usage by the fenced write that records the answer (the charge carries `milli`);
 * a run cap that fits N calls stops at N, a charge above its estimate passes a cap by at
 * most that excess and the next call is refused, the month's credits and the per-row
 * budget hold, a call without an answer gives its reservation back at once, a Stop
 * mid-call releases it and a write that lost its fence charges nothing. Keys are per
 * block, per call (`#repair`) and per execution (a foreach item's own).
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import type { ChargeKey } from "@/domain/charges";
import type { Plan } from "@/domain/statuses";
import { startRun } from "@/engine/dispatcher";
import { llmCalls } from "@/engine/llm-calls";
import type { PaidEngine } from "@/engine/paid-calls";
import {
  isLostAuthority,
  isRowBudgetExceeded,
  isSharedLimiterRequired,
  isUsageLimitHalt,
} from "@/errors";
import { type LlmCallPlan, llmOf } from "@/execution/llm-calls";
import { planLimits } from "@/limits/plans";
import { RateLines } from "@/limits/rate/line";
import { coolLlmKey } from "@/limits/rate/llm";
import { MemoryLimiter } from "@/limits/rate/memory";
import { cancelCells } from "@/store/cells/cancel";
import type { CellAttemptRef } from "@/store/cells/transition";
import { recordStep } from "@/store/execution-steps/record";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { apiClient, dataOf } from "../helpers/api";
import { claimNext, completeCell } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

const db = () => getDatabase().db;
const MODEL = "test-model";
/** Credits per 1,000 tokens: milli-credits per token. */
const PRICE = { inputPer1k: 2, outputPer1k: 5 };
const saved = process.env.CELLFLOW_LLM_PRICES;

beforeAll(async () => {
  await useTestDatabase();
  process.env.CELLFLOW_LLM_PRICES = JSON.stringify({ [MODEL]: PRICE });
});
afterAll(() => {
  if (saved === undefined) delete process.env.CELLFLOW_LLM_PRICES;
  else process.env.CELLFLOW_LLM_PRICES = saved;
});

type Cell = CellAttemptRef & { tableId: string };

/** A call of block `classify` with 10 input tokens and a cap of 20: 10·2 + 20·5 = 120 milli. */
const plan = (over: Partial<LlmCallPlan> = {}): LlmCallPlan => ({
  blockId: "classify",
  call: "answer",
  provider: "openai",
  model: MODEL,
  inputTokens: 10,
  maxTokens: 20,
  ...over,
});
const ESTIMATE = 10 * PRICE.inputPer1k + 20 * PRICE.outputPer1k;

/** A workspace on `plan` with an llm workflow group over `rows` rows, all claimed in a run. */
async function llmRun(
  name: string,
  spec: { rows: number; plan?: Plan; maxCredits?: number; maxCreditsPerRow?: number },
): Promise<{ ws: { id: string; key: string }; dispatchId: string; cells: Cell[] }> {
  const ws = await newWorkspace(name);
  await db().execute(
    sql`update workspaces set plan = ${spec.plan ?? "unlimited"} where id = ${ws.id}`,
  );
  const t = await workflowTable(ws.key, {
    workflow: {
      inputs: [{ name: "company", type: "text", required: true }],
      blocks: [
        { id: "classify", type: "llm", model: MODEL, prompt: "Classify {{inputs.company}}" },
      ],
    },
    columns: [{ id: "company", name: "Company", type: "text" }],
    outputs: { label: "classify" },
    group: { inputs: { company: "company" } },
    rows: Array.from({ length: spec.rows }, (_, i) => ({ company: `Company ${i}` })),
  });
  const started = await startRun(
    { db: db(), backend: getBackend() },
    {
      tableId: t.tableId,
      groupIds: ["g"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 100,
      ...(spec.maxCredits !== undefined ? { maxCredits: spec.maxCredits } : {}),
      ...(spec.maxCreditsPerRow !== undefined ? { maxCreditsPerRow: spec.maxCreditsPerRow } : {}),
    },
  );
  const cells: Cell[] = [];
  for (const rowId of t.rowIds) {
    const claimed = await claimNext(db(), { tableId: t.tableId, rowId, groupId: "g" });
    if (!claimed) throw new Error("nothing claimed");
    cells.push({ tableId: t.tableId, rowId, ...claimed });
  }
  return { ws, dispatchId: started.dispatchId, cells };
}

const engine = (over: Partial<PaidEngine> = {}): PaidEngine => ({
  lines: new RateLines(new MemoryLimiter()),
  enrichmentCacheTtlMs: 0,
  locks: { db: db() },
  ...over,
});

/** The gate of `cell`'s attempt, and the halts it reported. */
function gate(
  ws: { id: string },
  cell: Cell,
  dispatchId: string | null,
  opts: { plan?: Plan; engine?: PaidEngine } = {},
) {
  const halts: unknown[] = [];
  const calls = llmCalls(
    opts.engine ?? engine(),
    {
      workspaceId: ws.id,
      plan: opts.plan ?? "unlimited",
      tableId: cell.tableId,
      rowId: cell.rowId,
      groupId: cell.groupId,
      executionId: cell.executionId,
      attempt: cell.attempt,
      dispatchId,
    },
    (halt) => halts.push(halt),
  );
  return { calls, halts };
}

async function ledger(workspaceId: string) {
  return queryRows<{ source: string; state: string; milli: number; execution_id: string }>(
    db(),
    sql`select source, state::text, milli::int, execution_id from usage
         where workspace_id = ${workspaceId} order by id`,
  );
}

async function counters(workspaceId: string, dispatchId: string) {
  const [r] = await queryRows<{
    used: number;
    reserved: number;
    committed: number;
    status: string;
    halt: string | null;
  }>(
    db(),
    sql`select w.used_milli::int as used, w.reserved_milli::int as reserved,
               d.committed_milli::int as committed, d.status::text as status,
               d.halt_reason::text as halt
          from workspaces w, dispatches d where w.id = ${workspaceId} and d.id = ${dispatchId}`,
  );
  return r;
}

async function runView(key: string, tableId: string, dispatchId: string) {
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId } },
    }),
  );
}

const finish = (cell: Cell, charges: { chargeId: string; source: string; milli?: number }[]) =>
  completeCell(db(), { ...cell, outcome: "ok", finish: { blockErrors: {}, charges } });

describe("an llm call's reservation and charge", () => {
  it("is reserved at its estimate and charged its real usage by the write that records the answer", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-settle", { rows: 1, maxCredits: 10 });
    const [cell] = cells as [Cell];
    const { calls, halts } = gate(ws, cell, dispatchId);
    const turn = await calls.begin(plan(), new AbortController().signal);
    expect(await ledger(ws.id)).toEqual([
      {
        source: `llm:${MODEL}@classify`,
        state: "reserved",
        milli: ESTIMATE,
        execution_id: cell.executionId,
      },
    ]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      used: 0,
      reserved: ESTIMATE,
      committed: ESTIMATE,
    });
    const real = 10 * PRICE.inputPer1k + 7 * PRICE.outputPer1k;
    const answer = await turn.answered({ inputTokens: 10, outputTokens: 7 });
    expect(answer).toEqual({
      costCredits: real / 1000,
      charge: { chargeId: cell.executionId, source: `llm:${MODEL}@classify`, milli: real },
    });
    expect(await finish(cell, answer.charge ? [answer.charge] : [])).toEqual({ ok: true });
    expect(await ledger(ws.id)).toMatchObject([{ state: "charged", milli: real }]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      used: real,
      reserved: 0,
      committed: real,
    });
    expect(await runView(ws.key, cell.tableId, dispatchId)).toMatchObject({
      maxCredits: 10,
      creditsUsed: real / 1000,
    });
    expect(halts).toEqual([]);
  });

  const recorders = {
    "a block's checkpoint": (c: Cell, charges: ChargeKey[]) =>
      writeCheckpoint(db(), c, "classify", { output: { text: "x" }, taken: [] }, charges),
    "a child block's step record": (c: Cell, charges: ChargeKey[]) =>
      recordStep(
        db(),
        c,
        {
          scope: `${c.executionId}:inner`,
          key: "classify",
          digest: "d",
          output: { text: "x" },
          taken: [],
          retryOnResume: false,
        },
        undefined,
        charges,
      ),
  };
  for (const [name, record] of Object.entries(recorders))
    it(`${name} settles the real amount too; one that lost its fence settles nothing`, async () => {
      const { ws, dispatchId, cells } = await llmRun("llm-record", { rows: 2 });
      const [a, b] = cells as [Cell, Cell];
      const real = 3 * PRICE.inputPer1k + 4 * PRICE.outputPer1k;
      for (const c of [a, b]) {
        const turn = await gate(ws, c, dispatchId).calls.begin(
          plan(),
          new AbortController().signal,
        );
        const { charge } = await turn.answered({ inputTokens: 3, outputTokens: 4 });
        if (c === b) await cancelCells(db(), { tableId: b.tableId, rowIds: [b.rowId] });
        expect(await record(c, charge ? [charge] : [])).toBe(c === a);
      }
      expect((await ledger(ws.id)).map((e) => [e.execution_id, e.state, e.milli])).toEqual([
        [a.executionId, "charged", real],
      ]);
      expect(await counters(ws.id, dispatchId)).toMatchObject({ used: real, reserved: 0 });
    });

  it("a charge above its estimate is charged in full: a cap is passed by at most that excess, and the next call is refused", async () => {
    // 250 milli-credits: two estimates (240) fit, a third does not.
    const { ws, dispatchId, cells } = await llmRun("llm-overshoot", { rows: 3, maxCredits: 0.25 });
    const [a, b, c] = cells as [Cell, Cell, Cell];
    const ta = await gate(ws, a, dispatchId).calls.begin(plan(), new AbortController().signal);
    const tb = await gate(ws, b, dispatchId).calls.begin(plan(), new AbortController().signal);
    // The input was longer in tokens than its estimate: 40 in, 20 out.
    const over = 40 * PRICE.inputPer1k + 20 * PRICE.outputPer1k;
    const ca = await ta.answered({ inputTokens: 40, outputTokens: 20 });
    const cb = await tb.answered({ inputTokens: 10, outputTokens: 20 });
    expect(await finish(a, ca.charge ? [ca.charge] : [])).toEqual({ ok: true });
    expect(await finish(b, cb.charge ? [cb.charge] : [])).toEqual({ ok: true });
    const used = over + ESTIMATE;
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      used,
      reserved: 0,
      committed: used,
    });
    // Past the cap by a's excess over its estimate, no more.
    expect(used).toBeGreaterThan(250);
    expect(used - 250).toBeLessThanOrEqual(over - ESTIMATE);
    const third = gate(ws, c, dispatchId);
    await expect(third.calls.begin(plan(), new AbortController().signal)).rejects.toSatisfy(
      isUsageLimitHalt,
    );
    expect(third.halts).toHaveLength(1);
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      used,
      committed: used,
      status: "halted",
      halt: "run_credit_cap",
    });
  });
});

describe("caps on llm calls", () => {
  it("a run cap that fits 3 calls stops at 3: the 4th is not reserved and the run halts", async () => {
    const cap = (3 * ESTIMATE) / 1000;
    const { ws, dispatchId, cells } = await llmRun("llm-run-cap", { rows: 4, maxCredits: cap });
    const results: string[] = [];
    for (const cell of cells) {
      const g = gate(ws, cell, dispatchId);
      const r = await g.calls.begin(plan(), new AbortController().signal).then(
        () => "admitted",
        (err: unknown) => (isUsageLimitHalt(err) && g.halts[0] === err ? "halted" : String(err)),
      );
      results.push(r);
    }
    expect(results).toEqual(["admitted", "admitted", "admitted", "halted"]);
    expect((await ledger(ws.id)).length).toBe(3);
    const view = await runView(ws.key, cells[0]?.tableId ?? "", dispatchId);
    expect(view).toMatchObject({ status: "halted", haltReason: "run_credit_cap", maxCredits: cap });
    const [event] = await queryRows<{ message: string }>(
      db(),
      sql`select data->>'message' as message from events
           where table_id = ${cells[0]?.tableId ?? ""} and kind = 'limit'`,
    );
    expect(event?.message).toContain(`credit cap of ${cap} credits`);
  });

  it("the month's credits: the calls that fit are reserved, the next halts the run as monthly_credits", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-month", { rows: 3, plan: "free" });
    const cap = (planLimits("free").monthlyCredits ?? 0) * 1000;
    // Room for two estimates, not three.
    await db().execute(
      sql`update workspaces set used_milli = ${cap - 2 * ESTIMATE - 1},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date
           where id = ${ws.id}`,
    );
    const ends: string[] = [];
    for (const cell of cells)
      ends.push(
        await gate(ws, cell, dispatchId, { plan: "free" })
          .calls.begin(plan(), new AbortController().signal)
          .then(
            () => "admitted",
            (err: unknown) => (isUsageLimitHalt(err) ? "halted" : String(err)),
          ),
      );
    expect(ends).toEqual(["admitted", "admitted", "halted"]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      reserved: 2 * ESTIMATE,
      status: "halted",
      halt: "monthly_credits",
    });
  });

  it("a per-row budget: the answer fits, its repair call does not — over_budget, nothing reserved, the run goes on", async () => {
    const budget = (ESTIMATE + ESTIMATE / 2) / 1000;
    const { ws, dispatchId, cells } = await llmRun("llm-row-budget", {
      rows: 1,
      maxCreditsPerRow: budget,
    });
    const [cell] = cells as [Cell];
    const { calls, halts } = gate(ws, cell, dispatchId);
    await calls.begin(plan(), new AbortController().signal);
    const refused = await calls
      .begin(plan({ call: "repair" }), new AbortController().signal)
      .catch((err: unknown) => err);
    expect(isRowBudgetExceeded(refused)).toBe(true);
    expect(halts).toEqual([refused]);
    expect(refused).toMatchObject({
      source: `llm:${MODEL}@classify#repair`,
      credits: ESTIMATE / 1000,
    });
    expect((await ledger(ws.id)).map((e) => e.source)).toEqual([`llm:${MODEL}@classify`]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({
      reserved: ESTIMATE,
      status: "active",
    });
  });
});

describe("calls without an answer", () => {
  it("failed(): the reservation is given back at once", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-failed", { rows: 1, maxCredits: 1 });
    const [cell] = cells as [Cell];
    const turn = await gate(ws, cell, dispatchId).calls.begin(plan(), new AbortController().signal);
    expect(await counters(ws.id, dispatchId)).toMatchObject({ reserved: ESTIMATE });
    await turn.failed();
    expect(await ledger(ws.id)).toEqual([]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({ reserved: 0, committed: 0 });
  });

  it("a Stop mid-call releases the reservation, and the late answer's write charges nothing", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-stop", { rows: 1, maxCredits: 1 });
    const [cell] = cells as [Cell];
    const turn = await gate(ws, cell, dispatchId).calls.begin(plan(), new AbortController().signal);
    await cancelCells(db(), { tableId: cell.tableId });
    expect(await counters(ws.id, dispatchId)).toMatchObject({ reserved: 0, committed: 0 });
    const { charge } = await turn.answered({ inputTokens: 10, outputTokens: 20 });
    expect(await finish(cell, charge ? [charge] : [])).toEqual({ ok: false, reason: "cancelled" });
    expect(await ledger(ws.id)).toEqual([]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({ used: 0, reserved: 0 });
  });

  it("a Stop while the call waits its turn: begin rejects and the reservation is back before it returns", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-stop-wait", { rows: 1 });
    const [cell] = cells as [Cell];
    const lines = new RateLines(new MemoryLimiter());
    // A provider's 429 holds the key: the call waits its turn after its reservation.
    await coolLlmKey(lines, ws.id, MODEL, 60_000);
    const stop = new AbortController();
    const pending = gate(ws, cell, dispatchId, { engine: engine({ lines }) })
      .calls.begin(plan(), stop.signal)
      .catch((err: unknown) => err);
    expect(await waitFor(async () => (await ledger(ws.id)).length === 1, 10_000)).toBe(true);
    stop.abort(new Error("stopped"));
    expect(await pending).toMatchObject({ message: "stopped" });
    expect(await ledger(ws.id)).toEqual([]);
    expect(await counters(ws.id, dispatchId)).toMatchObject({ reserved: 0 });
  });

  it("an attempt that lost its cell makes no call and reserves nothing", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-lost", { rows: 1 });
    const [cell] = cells as [Cell];
    await cancelCells(db(), { tableId: cell.tableId });
    const { calls, halts } = gate(ws, cell, dispatchId);
    const lost = await calls.begin(plan(), new AbortController().signal).catch((e: unknown) => e);
    expect(isLostAuthority(lost)).toBe(true);
    expect(halts).toEqual([lost]);
    expect(await ledger(ws.id)).toEqual([]);
  });
});

describe("what is charged under which key", () => {
  it("a model without a price reserves and charges nothing", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-free-model", { rows: 1, maxCredits: 1 });
    const [cell] = cells as [Cell];
    const turn = await gate(ws, cell, dispatchId).calls.begin(
      plan({ model: "not-priced" }),
      new AbortController().signal,
    );
    expect(await ledger(ws.id)).toEqual([]);
    expect(await turn.answered({ inputTokens: 100, outputTokens: 100 })).toEqual({
      costCredits: 0,
      charge: null,
    });
  });

  it("two llm blocks and a repair of one execution each charge once; a foreach item's call is keyed under its own execution", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-keys", { rows: 1 });
    const [cell] = cells as [Cell];
    const { calls } = gate(ws, cell, dispatchId);
    const item = `${cell.executionId}:each:0`;
    const charges = [];
    for (const [via, p] of [
      [calls, plan()],
      [calls, plan({ call: "repair" })],
      [calls, plan({ blockId: "summary" })],
      [llmOf(calls, item), plan({ blockId: "inner" })],
    ] as const) {
      const turn = await via.begin(p, new AbortController().signal);
      const { charge } = await turn.answered({ inputTokens: 1, outputTokens: 1 });
      if (charge) charges.push(charge);
    }
    expect(await finish(cell, charges)).toEqual({ ok: true });
    const each = 1 * PRICE.inputPer1k + 1 * PRICE.outputPer1k;
    expect((await ledger(ws.id)).map((e) => [e.execution_id, e.source, e.state, e.milli])).toEqual([
      [cell.executionId, `llm:${MODEL}@classify`, "charged", each],
      [cell.executionId, `llm:${MODEL}@classify#repair`, "charged", each],
      [cell.executionId, `llm:${MODEL}@summary`, "charged", each],
      [item, `llm:${MODEL}@inner`, "charged", each],
    ]);
    // GET /api/usage shows them by model; enrichment sources stay as they are.
    await db().execute(
      sql`insert into usage (workspace_id, execution_id, source, milli, state, charged_at)
          values (${ws.id}, 'e_other', 'company_lookup@step1', 3000, 'charged', now())`,
    );
    const usage = dataOf(await apiClient(ws.key).GET("/api/usage"));
    expect(usage.bySource).toEqual([
      { source: "company_lookup@step1", credits: 3 },
      { source: `llm:${MODEL}`, credits: (4 * each) / 1000 },
    ]);
  });

  it("where runs are separate processes, a per-process limiter is refused before anything is reserved", async () => {
    const { ws, dispatchId, cells } = await llmRun("llm-shared", { rows: 1 });
    const [cell] = cells as [Cell];
    const { calls, halts } = gate(ws, cell, dispatchId, {
      engine: engine({ requireSharedLimiter: true }),
    });
    const refused = await calls
      .begin(plan(), new AbortController().signal)
      .catch((e: unknown) => e);
    expect(isSharedLimiterRequired(refused)).toBe(true);
    expect(halts).toEqual([refused]);
    expect(await ledger(ws.id)).toEqual([]);
  });
});
