/**
 * A test run's credits (engine/test-run-gate.ts, store/usage/*-test-*.ts): an llm call
 * reserves the price of its estimate under the month's cap before it is made and is
 * charged the price of its real usage only when the run ends with its answer shown; a
 * call with no answer, and everything when the client left, is given back; a call the cap
 * refuses ends the run and reserves nothing; what a test run that never ended left
 * reserved is given back by the maintenance sweep, and nothing else is. A test run's llm
 * call takes its turn at the cells' limits (the same key, requests and tokens per minute):
 * its reservation holds the tokens until it settles with the real usage or gives them
 * back, a reservation over the tokens per minute is refused at once with its credits given
 * back, a 429 cools the key for every process; a call of a sub-workflow or a foreach item
 * is charged under that execution's own key.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { newId } from "@/domain/ids";
import { testRunGate } from "@/engine/test-run-gate";
import { isOverRateLimit, UsageLimitHalt } from "@/errors";
import type { LlmCallPlan } from "@/execution/llm-calls";
import { planLimits } from "@/limits/plans";
import { RateLines } from "@/limits/rate/line";
import { llmRateKey, llmRateLimit } from "@/limits/rate/llm";
import { PostgresLimiter } from "@/limits/rate/postgres";
import { releaseStaleTestRuns } from "@/store/usage/release-test-run";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

const db = () => getDatabase().db;
let lines: RateLines;

beforeAll(async () => {
  await useTestDatabase();
  lines = new RateLines(new PostgresLimiter(db()));
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** 1 milli-credit per input token, 2 per output token. */
const PRICES = JSON.stringify({ "model-a": { inputPer1k: 1, outputPer1k: 2 } });

const plan = (over: Partial<LlmCallPlan> = {}): LlmCallPlan => ({
  blockId: "ask",
  call: "answer",
  provider: "openai",
  model: "model-a",
  inputTokens: 100,
  maxTokens: 1_000,
  ...over,
});

async function credits(workspaceId: string): Promise<{ used: number; reserved: number }> {
  const [row] = await queryRows<{ used: number; reserved: number }>(
    db(),
    sql`select used_milli::int as used, reserved_milli::int as reserved from workspaces where id = ${workspaceId}`,
  );
  return row ?? { used: -1, reserved: -1 };
}

function gateFor(workspaceId: string, halts: unknown[] = []) {
  const testRunId = newId("test");
  const gate = testRunGate(
    { db: db(), lines },
    {
      workspaceId,
      plan: "free",
      testRunId,
      deadlineAt: Date.now() + 60_000,
      onHalt: (halt) => halts.push(halt),
    },
  );
  return { gate, testRunId };
}

const signal = () => new AbortController().signal;

describe("an llm call of a test run", () => {
  it("reserves the price of its estimate, then is charged the price of its real usage", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const turn = await gate.llm.begin(plan(), signal());
    // 100 input tokens + 1,000 output tokens at most: 100 + 2,000 milli.
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 2_100 });
    const priced = await turn.answered({ inputTokens: 120, outputTokens: 30 });
    expect(priced.costCredits).toBe(0.18);
    expect(priced.charge?.source).toBe("llm:model-a@ask");
    await gate.checkpoint("ask", { output: "x", taken: [] }, priced.charge ? [priced.charge] : []);
    expect(await gate.settle()).toBe(0.18);
    expect(await credits(ws.id)).toEqual({ used: 180, reserved: 0 });
  });

  it("a repair call is its own charge; a call that failed gives its reservation back at once", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const first = await gate.llm.begin(plan(), signal());
    const a = await first.answered({ inputTokens: 100, outputTokens: 10 });
    const repair = await gate.llm.begin(plan({ call: "repair", inputTokens: 200 }), signal());
    expect((await credits(ws.id)).reserved).toBe(2_100 + 2_200);
    const failed = await gate.llm.begin(plan({ blockId: "other" }), signal());
    expect((await credits(ws.id)).reserved).toBe(2_100 + 2_200 + 2_100);
    await failed.failed();
    expect((await credits(ws.id)).reserved).toBe(2_100 + 2_200);
    const b = await repair.answered({ inputTokens: 200, outputTokens: 5 });
    expect(b.charge?.source).toBe("llm:model-a@ask#repair");
    const charges = [a.charge, b.charge].flatMap((c) => (c ? [c] : []));
    await gate.checkpoint("ask", { output: "x", taken: [] }, charges);
    expect(await gate.settle()).toBe(0.33);
    expect(await credits(ws.id)).toEqual({ used: 120 + 210, reserved: 0 });
  });

  it("an unpriced model reserves and charges nothing", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const turn = await gate.llm.begin(plan({ model: "model-free" }), signal());
    expect(await turn.answered({ inputTokens: 10, outputTokens: 10 })).toEqual({
      costCredits: 0,
      charge: null,
    });
    expect(await gate.settle()).toBe(0);
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 0 });
  });

  it("the month's cap refuses a call whose estimate does not fit: it halts the run and reserves nothing", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const cap = (planLimits("free").monthlyCredits ?? 0) * 1000;
    await db().execute(
      sql`update workspaces set plan = 'free', used_milli = ${cap - 2_000},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date
           where id = ${ws.id}`,
    );
    const halts: unknown[] = [];
    const { gate } = gateFor(ws.id, halts);
    await expect(gate.llm.begin(plan(), signal())).rejects.toBeInstanceOf(UsageLimitHalt);
    expect(halts).toHaveLength(1);
    expect(halts[0]).toBeInstanceOf(UsageLimitHalt);
    expect(await credits(ws.id)).toEqual({ used: cap - 2_000, reserved: 0 });
    // A smaller call still fits.
    const small = await gate.llm.begin(plan({ inputTokens: 10, maxTokens: 100 }), signal());
    expect((await credits(ws.id)).reserved).toBe(210);
    await small.failed();
  });
});

describe("the sweep of test runs that never ended", () => {
  it("gives back what a test run older than an hour still holds, and nothing of a younger one or of a cell", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const old = gateFor(ws.id);
    const young = gateFor(ws.id);
    await old.gate.llm.begin(plan(), signal());
    await young.gate.llm.begin(plan(), signal());
    await db().execute(
      sql`update usage set created_at = now() - interval '2 hours'
           where cell_execution_id = ${old.testRunId}`,
    );
    // A cell attempt's reservation as old: the cell's own end releases it, never the sweep.
    await db().execute(
      sql`with ins as (
            insert into usage (workspace_id, execution_id, source, milli, state, table_id, row_id,
                               group_id, cell_execution_id, attempt, created_at)
            values (${ws.id}, 'ex_cell', 'company_lookup', 5000, 'reserved', 'tbl_x', 'row_x', 'g',
                    'ex_cell', 1, now() - interval '2 hours')
            returning 1)
          update workspaces set reserved_milli = reserved_milli + 5000
           where id = ${ws.id} and exists (select 1 from ins)`,
    );
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 4_200 + 5_000 });
    expect(await releaseStaleTestRuns(db())).toBe(1);
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 2_100 + 5_000 });
    expect(await releaseStaleTestRuns(db())).toBe(0);
    await young.gate.settle();
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 5_000 });
  });
});

describe("an llm call of a test run at the cells' limits", () => {
  /** A cell's call of `weight` tokens that may wait 50 ms at most, from another process. */
  const cellTake = async (workspaceId: string, weight: number) => {
    const other = new PostgresLimiter(db());
    return other.take(llmRateKey(workspaceId, "model-a"), llmRateLimit("free"), {
      weight,
      maxWaitMs: 50,
    });
  };

  it("holds its reservation's tokens on the cells' key until it settles with the real usage", async () => {
    // 6,000 tokens a minute: 1,000 per sixth of it (slots.ts); requests spaced 10 ms apart.
    vi.stubEnv("CELLFLOW_LLM_TOKENS_PER_MINUTE", "6000");
    vi.stubEnv("CELLFLOW_LLM_REQUESTS_PER_MINUTE", "6000");
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const turn = await gate.llm.begin(plan({ inputTokens: 100, maxTokens: 700 }), signal());
    // 800 reserved: a cell's call of 800 does not fit beside it…
    expect(await cellTake(ws.id, 800)).toMatchObject({ ok: false, reason: "limited" });
    await turn.answered({ inputTokens: 100, outputTokens: 20 });
    // …and fits once the call settled at the 120 it used.
    expect((await cellTake(ws.id, 800)).ok).toBe(true);
  });

  it("gives its tokens back when it got no answer", async () => {
    vi.stubEnv("CELLFLOW_LLM_TOKENS_PER_MINUTE", "6000");
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const turn = await gate.llm.begin(plan({ inputTokens: 100, maxTokens: 800 }), signal());
    expect((await cellTake(ws.id, 200)).ok).toBe(false);
    await turn.failed();
    expect((await cellTake(ws.id, 900)).ok).toBe(true);
  });

  it("is refused at once when its reservation is over the tokens per minute, its credits given back", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    vi.stubEnv("CELLFLOW_LLM_TOKENS_PER_MINUTE", "1000");
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const err = await gate.llm.begin(plan(), signal()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isOverRateLimit(err)).toBe(true);
    expect((err as Error).message).toContain("reserves 1100 tokens");
    expect((err as Error).message).toContain("1000 tokens per minute");
    expect(await credits(ws.id)).toEqual({ used: 0, reserved: 0 });
    expect(await gate.settle()).toBe(0);
  });

  it("a 429 cools the cells' key for every process", async () => {
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const turn = await gate.llm.begin(plan({ maxTokens: 100 }), signal());
    await turn.busy(5_000);
    await turn.failed();
    const held = await cellTake(ws.id, 10);
    expect(held).toMatchObject({ ok: false, reason: "limited" });
    if (!held.ok) expect(held.retryAfterMs).toBeGreaterThan(4_000);
  });

  it("a sub-workflow's or a foreach item's call is reserved and charged under its own execution", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", PRICES);
    const ws = await newWorkspace();
    const { gate } = gateFor(ws.id);
    const items = ["ex_item0", "ex_item1"];
    const charges = [];
    for (const chargeId of items) {
      const turn = await gate.llm.begin(plan({ chargeId }), signal());
      const priced = await turn.answered({ inputTokens: 100, outputTokens: 10 });
      if (priced.charge) charges.push(priced.charge);
    }
    expect(charges.map((c) => c.chargeId)).toEqual(items);
    await gate.ledger.record({
      scope: "each",
      key: "ask",
      record: { digest: "", output: "x", taken: [], retryOnResume: false },
      charges,
    });
    // Two calls, two charges of 100 + 20 milli each.
    expect(await gate.settle()).toBe(0.24);
    expect(await credits(ws.id)).toEqual({ used: 240, reserved: 0 });
  });
});
