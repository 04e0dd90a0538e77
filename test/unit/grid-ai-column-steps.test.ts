/**
 * The "+ AI column" dialog's steps after the plan: the planned workflow run by the engine's
 * real llm block against a loopback model (each answer field lands in its column), the
 * create steps and what a failure leaves, the try's preview, and the cell details' model
 * calls.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableView } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { pickOutput, runWorkflow } from "@/execution/executor";
import {
  type AiColumnCalls,
  createAiColumn,
  createFailureText,
  ensureWorkflow,
} from "@/ui/grid/ai-column-create";
import { type AiColumnPlan, newAiField, tryInputs } from "@/ui/grid/ai-column-plan";
import { previewOf, shownValue, tryRowId, type WorkflowTestAnswer } from "@/ui/grid/ai-try";
import { creditsText, formatCredits, latestLlmCalls, llmCalls } from "@/ui/grid/llm-details";
import { columns, form, planned, table } from "../helpers/ai-column-forms";

describe("the planned workflow, run by the engine against a loopback model", () => {
  interface Seen {
    messages: { role: string; content: string }[];
    response_format?: { json_schema?: { schema?: { properties?: Record<string, unknown> } } };
  }
  const seen: Seen[] = [];
  let server: http.Server;
  let baseUrl = "";
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => {
        raw += c.toString();
      });
      req.on("end", () => {
        const body = JSON.parse(raw) as Seen;
        seen.push(body);
        const props = body.response_format?.json_schema?.schema?.properties;
        // A schema: one value per property (strings say which, numbers count the prompt).
        const user = body.messages.find((m) => m.role === "user")?.content ?? "";
        const content = props
          ? JSON.stringify(
              Object.fromEntries(
                Object.entries(props).map(([k, v]) => [
                  k,
                  (v as { type: string }).type === "number" ? user.length : `${k} of ${user}`,
                ]),
              ),
            )
          : `answer to ${user}`;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const run = async (plan: AiColumnPlan, data: Record<string, unknown>) => {
    const out = await runWorkflow({
      definition: WorkflowDefinition.parse(plan.workflow.definition),
      inputs: tryInputs(plan, data),
      row: {},
      executionId: "exec-1",
      signal: new AbortController().signal,
      secrets: { LLM_API_KEY: "test-key" },
    });
    return plan.fields.map((f) => [f.columnId, pickOutput(out.blocks, f.from)]);
  };

  it("a text answer lands in its column, asked with the row's values", async () => {
    const plan = planned(form({ name: "Summary", prompt: "About {{Company}}", baseUrl }));
    expect(await run(plan, { company: "Acme" })).toEqual([["summary", "answer to About Acme"]]);
    expect(seen.at(-1)?.messages.filter((m) => m.role === "user")).toEqual([
      { role: "user", content: "About Acme" },
    ]);
  });

  it("each field of a JSON answer lands in its own column", async () => {
    const plan = planned(
      form({ name: "Classify", prompt: "{{Company}} in {{Country}}", baseUrl }, [
        newAiField("Industry"),
        newAiField("Size", "number"),
      ]),
    );
    expect(await run(plan, { company: "Acme", country: "FR" })).toEqual([
      ["industry_2", "industry of Acme in FR"],
      ["size", "Acme in FR".length],
    ]);
  });
});

describe("creating: the steps and what a failure leaves", () => {
  const plan = () => planned(form({ name: "Classify", prompt: "{{Company}}" }));
  const created = { id: "t1", name: "T", columns, groups: [] } as unknown as TableView;

  /** An API that records what it was asked and fails where told. */
  function api(fail: { workflow?: boolean; table?: boolean } = {}) {
    const asked: string[] = [];
    const calls: AiColumnCalls = {
      async createWorkflow(body) {
        asked.push(`create ${body.name}`);
        if (fail.workflow) throw new Error("workflow refused");
        return { id: "wf_new" };
      },
      async updateWorkflow(id, body) {
        asked.push(`update ${id} ${body.name}`);
        if (fail.workflow) throw new Error("workflow refused");
        return {};
      },
      async patchTable(body) {
        const group = body.groups.at(-1);
        asked.push(`patch ${group?.kind === "workflow" ? group.workflowId : "?"}`);
        if (fail.table) throw new Error("table refused");
        return created;
      },
    };
    return { asked, calls };
  }

  it("creates the workflow, then the columns and group naming it", async () => {
    const { asked, calls } = api();
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(outcome).toEqual({ ok: true, table: created, workflowId: "wf_new" });
    expect(asked).toEqual(["create Classify", "patch wf_new"]);
  });

  it("a draft a try saved is updated to the form, not made again", async () => {
    const { asked, calls } = api();
    expect(await ensureWorkflow(calls, plan(), "wf_try")).toBe("wf_try");
    expect(await ensureWorkflow(calls, plan(), null)).toBe("wf_new");
    asked.length = 0;
    const outcome = await createAiColumn(calls, table, plan(), "wf_try");
    expect(outcome.ok && outcome.workflowId).toBe("wf_try");
    expect(asked).toEqual(["update wf_try Classify", "patch wf_try"]);
  });

  it("a refused table change keeps the workflow's id and says it was saved", async () => {
    const { asked, calls } = api({ table: true });
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(asked).toEqual(["create Classify", "patch wf_new"]);
    expect(outcome).toMatchObject({ ok: false, stage: "table", workflowId: "wf_new" });
    if (outcome.ok) return;
    expect(createFailureText(outcome, "Classify", "bad")).toBe(
      "The workflow “Classify” was saved, but the columns and group could not be added to the table: bad. Create again to retry; it reuses that workflow.",
    );
  });

  it("a refused workflow adds nothing to the table", async () => {
    const { asked, calls } = api({ workflow: true });
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(asked).toEqual(["create Classify"]);
    expect(outcome).toMatchObject({ ok: false, stage: "workflow", workflowId: null });
    if (outcome.ok) return;
    expect(createFailureText(outcome, "Classify", "bad")).toBe(
      "The workflow could not be created, so nothing was added: bad",
    );
  });
});

describe("trying on a row", () => {
  const twoFields = () =>
    planned(
      form({ name: "Classify", prompt: "{{Company}}" }, [
        newAiField("Industry"),
        newAiField("Size", "number"),
      ]),
    );

  it("starts on the first selected row the grid shows, else the first row", () => {
    const rows = [{ id: "r1" }, { id: "r2" }, { id: "r3" }];
    expect(tryRowId(rows, new Set(["r3", "r2"]))).toBe("r2");
    expect(tryRowId(rows, new Set(["gone"]))).toBe("r1");
    expect(tryRowId([], new Set())).toBeNull();
  });

  /** A test endpoint's answer: what a test sets, the rest as an empty completed run. */
  const testAnswer = (over: Partial<WorkflowTestAnswer>): WorkflowTestAnswer => ({
    status: "completed",
    outputs: null,
    blocks: [],
    error: null,
    costCredits: 0,
    ...over,
  });

  it("previews each field from the block's output", () => {
    const answer = testAnswer({
      outputs: { industry: "retail", size: 40 },
      blocks: [
        {
          id: "ai",
          status: "completed",
          output: { industry: "retail", size: 40 },
          error: null,
          durationMs: 5,
        },
      ],
    });
    expect(previewOf(twoFields(), answer)).toEqual({
      ok: true,
      costCredits: 0,
      values: [
        { name: "Industry", columnId: "industry_2", value: "retail" },
        { name: "Size", columnId: "size", value: 40 },
      ],
    });
    // Without the block listed, the workflow's outputs (its one block's output) are read.
    const bare = testAnswer({ outputs: { text: "hi" }, costCredits: 0.018 });
    const text = planned(form({ name: "Say", prompt: "x" }));
    expect(previewOf(text, bare)).toEqual({
      ok: true,
      costCredits: 0.018,
      values: [{ name: "Say", columnId: "say", value: "hi" }],
    });
  });

  it("a failed or paused try says why, with the blocks' errors", () => {
    const failed = testAnswer({
      status: "error",
      blocks: [
        { id: "ai", status: "error", output: null, error: "the model refused", durationMs: 3 },
      ],
    });
    expect(previewOf(twoFields(), failed)).toEqual({
      ok: false,
      error: "The try failed: ai: the model refused",
    });
    const timedOut = testAnswer({
      status: "error",
      blocks: [{ id: "ai", status: "cancelled", output: null, error: null, durationMs: 60_000 }],
      error: "the test ran past 60 s",
    });
    expect(previewOf(twoFields(), timedOut)).toEqual({
      ok: false,
      error: "The try failed: the test ran past 60 s",
    });
    const paused = testAnswer({ status: "paused" });
    expect(previewOf(twoFields(), paused)).toEqual({ ok: false, error: "The workflow paused." });
  });

  it("shows values as the grid would", () => {
    expect([shownValue("a"), shownValue(3), shownValue(false), shownValue(null)]).toEqual([
      "a",
      "3",
      "false",
      "—",
    ]);
  });
});

describe("a cell's model calls", () => {
  const details = {
    costCredits: 0.0125,
    llm: {
      ai: {
        model: "gpt-4o-mini",
        inputTokens: 1234,
        outputTokens: 56,
        costCredits: 0.0125,
        cached: false,
      },
      check: { model: "claude", inputTokens: 10, outputTokens: 2, costCredits: 0, cached: true },
      junk: "not an object",
    },
  };

  it("reads each llm block's model, tokens, cost and cache hit", () => {
    expect(llmCalls(details)).toEqual([
      {
        blockId: "ai",
        model: "gpt-4o-mini",
        inputTokens: 1234,
        outputTokens: 56,
        costCredits: 0.0125,
        cached: false,
      },
      {
        blockId: "check",
        model: "claude",
        inputTokens: 10,
        outputTokens: 2,
        costCredits: 0,
        cached: true,
      },
    ]);
    expect(llmCalls({ steps: [] })).toEqual([]);
    expect(llmCalls(null)).toEqual([]);
  });

  it("takes the newest attempt that called a model", () => {
    const attempts = [
      { attempt: 3, details: {} },
      { attempt: 2, details },
      { attempt: 1, details: { llm: { ai: { model: "old" } } } },
    ];
    const latest = latestLlmCalls(attempts);
    expect(latest?.attempt.attempt).toBe(2);
    expect(latest?.calls.map((c) => c.blockId)).toEqual(["ai", "check"]);
    expect(latestLlmCalls([{ details: {} }])).toBeNull();
  });

  it("shows credits to a thousandth", () => {
    expect([0.0125, 2, 1.5, 0.0004, 1234.5678].map(formatCredits)).toEqual([
      "0.013",
      "2",
      "1.5",
      "0",
      "1234.568",
    ]);
    expect([creditsText(1), creditsText(0.25)]).toEqual(["1 credit", "0.25 credits"]);
  });
});
