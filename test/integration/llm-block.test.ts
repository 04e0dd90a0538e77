/**
 * The llm block against the local LLM server's two dialects (test/helpers/llm-server.ts):
 * what it sends (model, system, rendered prompt, temperature, max_tokens always, the
 * structured-output request: response_format for OpenAI, a forced tool call for
 * Anthropic, the key from the workspace secret), what it returns and reports (usage,
 * details.llm), the one repair call of an answer that fails its schema, how provider
 * failures map to retries, and the order in which it asks the engine's gate (begin before
 * each call; answered, or busy then failed, or failed after it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LlmBlock } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { DEFAULT_MAX_TOKENS, estimateTokens } from "@/domain/llm-tokens";
import { runLlm } from "@/execution/blocks/llm";
import { type BlockContext, BlockError } from "@/execution/blocks/types";
import type { LlmCallPlan, LlmCalls, LlmUsage } from "@/execution/llm-calls";
import { seedOf, valueForSchema } from "../helpers/llm-answers";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";

let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer();
});
afterEach(() => {
  delete process.env.CELLFLOW_LLM_BASE_URL;
  delete process.env.CELLFLOW_ANTHROPIC_BASE_URL;
  server.options.omitUsage = false;
  delete server.options.usage;
  delete server.options.answerText;
});
afterAll(() => server.close());

const OPENAI_KEY = "sk-test-workspace-key-123";
const ANTHROPIC_KEY = "sk-ant-test-key-456";

function context(
  opts: { secrets?: Record<string, string>; signal?: AbortSignal; llm?: LlmCalls } = {},
): BlockContext {
  return {
    scope: {
      inputs: { n: 3 },
      row: { name: "Ada" },
      blocks: {},
      vars: {},
      secrets: opts.secrets ?? { LLM_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    },
    signal: opts.signal ?? new AbortController().signal,
    executionId: "exe_llm1",
    ...(opts.llm ? { llm: opts.llm } : {}),
  };
}

function block(fields: Partial<LlmBlock> = {}): LlmBlock {
  const anthropic = fields.provider === "anthropic";
  return {
    id: "ask",
    type: "llm",
    baseUrl: anthropic ? server.url : server.openaiBaseUrl,
    model: anthropic ? "claude-test" : "gpt-test",
    prompt: "Describe {{ row.name }} in {{ inputs.n }} words",
    ...fields,
  };
}

const SCHEMA = {
  type: "object",
  properties: {
    size: { type: "string", enum: ["small", "big"] },
    score: { type: "number", minimum: 0, maximum: 10 },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["size", "score", "tags"],
  additionalProperties: false,
};

/** A gate that reserves nothing and records what it was asked, in order. */
function recordingGate(costPerCall = 0.25) {
  const log: string[] = [];
  const plans: LlmCallPlan[] = [];
  const usages: LlmUsage[] = [];
  const gate: LlmCalls = {
    async begin(plan) {
      log.push(`begin:${plan.call}`);
      plans.push(plan);
      return {
        async answered(usage) {
          log.push(`answered:${plan.call}`);
          usages.push(usage);
          const repair = plan.call === "repair" ? "#repair" : "";
          const charge: ChargeKey = {
            chargeId: "exe_llm1",
            source: `llm:${plan.model}@${plan.blockId}${repair}`,
          };
          return { costCredits: costPerCall, charge };
        },
        async failed() {
          log.push(`failed:${plan.call}`);
        },
        async busy(ms) {
          log.push(`busy:${plan.call}:${ms}`);
        },
      };
    },
  };
  return { gate, log, plans, usages };
}

async function failure(promise: Promise<unknown>): Promise<BlockError> {
  const err = await promise.then(
    () => {
      throw new Error("expected the block to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BlockError);
  return err as BlockError;
}

const since = (before: number) => server.requests.slice(before);

describe("OpenAI-compatible dialect", () => {
  it("sends system, the rendered prompt, temperature and max_tokens with the key; reports usage", async () => {
    const before = server.requests.length;
    const { gate, log, plans, usages } = recordingGate();
    const result = await runLlm(
      block({ system: "Be terse.", temperature: 0.3, maxTokens: 64 }),
      context({ llm: gate }),
    );
    const prompt = "Describe Ada in 3 words";
    expect(result.output).toEqual({ text: `Answer: ${prompt}`, model: "gpt-test" });
    const [req] = since(before);
    expect(req).toMatchObject({
      dialect: "openai",
      model: "gpt-test",
      apiKey: OPENAI_KEY,
      temperature: 0.3,
      maxTokens: 64,
      jsonSchema: null,
      messages: [
        { role: "system", content: "Be terse." },
        { role: "user", content: prompt },
      ],
    });
    const inputTokens = estimateTokens("Be terse.") + estimateTokens(prompt);
    expect(req?.inputTokens).toBe(inputTokens);
    expect(log).toEqual(["begin:answer", "answered:answer"]);
    expect(plans).toEqual([
      {
        blockId: "ask",
        call: "answer",
        provider: "openai",
        model: "gpt-test",
        inputTokens,
        maxTokens: 64,
      },
    ]);
    expect(usages).toEqual([{ inputTokens, outputTokens: req?.outputTokens }]);
    expect(result.charges).toEqual([{ chargeId: "exe_llm1", source: "llm:gpt-test@ask" }]);
    expect(result.details).toEqual({
      llm: {
        ask: {
          model: "gpt-test",
          inputTokens,
          outputTokens: req?.outputTokens,
          costCredits: 0.25,
          cached: false,
        },
      },
    });
  });

  it("max_tokens is always sent (the default when the block sets none); no temperature unless set", async () => {
    const before = server.requests.length;
    await runLlm(block(), context());
    const [req] = since(before);
    expect(req?.maxTokens).toBe(DEFAULT_MAX_TOKENS);
    expect(req?.temperature).toBeNull();
    expect(req?.messages).toEqual([{ role: "user", content: "Describe Ada in 3 words" }]);
  });

  it("structured output: response_format json_schema, the parsed answer validated", async () => {
    const before = server.requests.length;
    const result = await runLlm(block({ jsonSchema: SCHEMA }), context());
    expect(result.output).toEqual(valueForSchema(SCHEMA, seedOf("Describe Ada in 3 words")));
    const [req] = since(before);
    expect(req?.jsonSchema).toEqual(SCHEMA);
    expect(req?.headers["content-type"]).toMatch(/application\/json/);
  });

  it("a provider that reports no usage: the estimate in, estimateTokens of the answer out", async () => {
    server.options.omitUsage = true;
    const { gate, usages } = recordingGate();
    const result = await runLlm(block(), context({ llm: gate }));
    const text = (result.output as { text: string }).text;
    expect(usages).toEqual([
      {
        inputTokens: estimateTokens("Describe Ada in 3 words"),
        outputTokens: estimateTokens(text),
      },
    ]);
  });

  it("without a baseUrl on the block, CELLFLOW_LLM_BASE_URL is the endpoint", async () => {
    process.env.CELLFLOW_LLM_BASE_URL = server.openaiBaseUrl;
    const before = server.requests.length;
    const { baseUrl: _omit, ...rest } = block();
    await runLlm(rest, context());
    expect(since(before)).toHaveLength(1);
  });
});

describe("Anthropic dialect", () => {
  it("sends x-api-key, anthropic-version, system, temperature, max_tokens; reports usage", async () => {
    const before = server.requests.length;
    const { gate, log, plans, usages } = recordingGate();
    const result = await runLlm(
      block({ provider: "anthropic", system: "Be terse.", temperature: 0, maxTokens: 32 }),
      context({ llm: gate }),
    );
    const prompt = "Describe Ada in 3 words";
    const text = `Answer: ${prompt}`.slice(0, 32 * 4);
    expect(result.output).toEqual({ text, model: "claude-test" });
    const [req] = since(before);
    expect(req).toMatchObject({
      dialect: "anthropic",
      apiKey: ANTHROPIC_KEY,
      temperature: 0,
      maxTokens: 32,
      messages: [
        { role: "system", content: "Be terse." },
        { role: "user", content: prompt },
      ],
    });
    expect(req?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req?.headers.authorization).toBeUndefined();
    expect(log).toEqual(["begin:answer", "answered:answer"]);
    expect(plans[0]).toMatchObject({ provider: "anthropic", model: "claude-test", maxTokens: 32 });
    expect(usages).toEqual([{ inputTokens: req?.inputTokens, outputTokens: req?.outputTokens }]);
  });

  it("structured output through a forced tool call: the tool's input is the answer", async () => {
    const before = server.requests.length;
    const result = await runLlm(block({ provider: "anthropic", jsonSchema: SCHEMA }), context());
    expect(result.output).toEqual(valueForSchema(SCHEMA, seedOf("Describe Ada in 3 words")));
    const [req] = since(before);
    expect(req?.jsonSchema).toEqual(SCHEMA);
    expect(req?.maxTokens).toBe(DEFAULT_MAX_TOKENS);
  });

  it("the key is the secret ANTHROPIC_API_KEY: LLM_API_KEY alone does not do", async () => {
    const before = server.requests.length;
    const err = await failure(
      runLlm(block({ provider: "anthropic" }), context({ secrets: { LLM_API_KEY: OPENAI_KEY } })),
    );
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/set the workspace secret ANTHROPIC_API_KEY/);
    expect(since(before)).toHaveLength(0);
  });

  it("without a baseUrl on the block, CELLFLOW_ANTHROPIC_BASE_URL is the endpoint", async () => {
    process.env.CELLFLOW_ANTHROPIC_BASE_URL = server.url;
    const before = server.requests.length;
    const { baseUrl: _omit, ...rest } = block({ provider: "anthropic" });
    await runLlm(rest, context());
    expect(since(before).map((r) => r.dialect)).toEqual(["anthropic"]);
  });
});

describe("the schema repair", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: an answer that breaks the schema is asked again once, with the errors; both calls are charged`, async () => {
      server.failNext(1, "schema-violation");
      const before = server.requests.length;
      const { gate, log, plans } = recordingGate();
      const result = await runLlm(block({ provider, jsonSchema: SCHEMA }), context({ llm: gate }));
      const [first, repair] = since(before);
      expect(since(before)).toHaveLength(2);
      // The server's answer to the repair call (its seed is the last user message).
      expect(result.output).toEqual(
        valueForSchema(SCHEMA, seedOf(repair?.messages.at(-1)?.content ?? "")),
      );
      // The repair shows the model its answer and what was wrong with it.
      const messages = repair?.messages ?? [];
      expect(messages.slice(0, -2)).toEqual(first?.messages);
      expect(messages.at(-2)?.role).toBe("assistant");
      expect(JSON.parse(messages.at(-2)?.content ?? "")).toMatchObject({ size: "__not_allowed__" });
      expect(messages.at(-1)?.role).toBe("user");
      expect(messages.at(-1)?.content).toMatch(
        /answer\/size must be equal to one of the allowed values/,
      );
      expect(log).toEqual(["begin:answer", "answered:answer", "begin:repair", "answered:repair"]);
      const inputTokens = messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
      expect(plans[1]).toMatchObject({ call: "repair", inputTokens });
      expect(result.charges?.map((c) => c.source)).toEqual([
        `llm:${plans[0]?.model}@ask`,
        `llm:${plans[0]?.model}@ask#repair`,
      ]);
      expect(result.details?.llm?.ask).toEqual({
        model: plans[0]?.model,
        inputTokens: (first?.inputTokens ?? 0) + (repair?.inputTokens ?? 0),
        outputTokens: (first?.outputTokens ?? 0) + (repair?.outputTokens ?? 0),
        costCredits: 0.5,
        cached: false,
      });
    });
  }

  it("an answer that is not JSON is repaired too", async () => {
    server.failNext(1, "not-json");
    const before = server.requests.length;
    const result = await runLlm(block({ jsonSchema: SCHEMA }), context());
    expect(result.output).toMatchObject({ size: expect.any(String) });
    expect(since(before)[1]?.messages.at(-1)?.content).toMatch(/not valid JSON/);
  });

  it("a repaired answer that still fails ends the block, not retryable, naming the errors", async () => {
    server.failNext(2, "schema-violation");
    const before = server.requests.length;
    const { gate, log } = recordingGate();
    const err = await failure(runLlm(block({ jsonSchema: SCHEMA }), context({ llm: gate })));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/does not match the jsonSchema after one repair/);
    expect(err.message).toMatch(/answer\/score must be number/);
    expect(since(before)).toHaveLength(2);
    expect(log).toEqual(["begin:answer", "answered:answer", "begin:repair", "answered:repair"]);
  });

  it("a schema ajv cannot compile fails the block before any call", async () => {
    const before = server.requests.length;
    const err = await failure(
      runLlm(block({ jsonSchema: { type: "object", properties: { a: { type: 12 } } } }), context()),
    );
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/not a valid JSON schema/);
    expect(since(before)).toHaveLength(0);
  });
});

describe("failures", () => {
  it("429: the gate hears busy with the provider's wait, then failed; the block fails retryable", async () => {
    const limited = await startLlmServer({ requestsPerMinute: 1 });
    try {
      const { gate: first } = recordingGate();
      await runLlm(block({ baseUrl: limited.openaiBaseUrl }), context({ llm: first }));
      for (const provider of ["openai", "anthropic"] as const) {
        const { gate, log } = recordingGate();
        const baseUrl = provider === "openai" ? limited.openaiBaseUrl : limited.url;
        const err = await failure(runLlm(block({ provider, baseUrl }), context({ llm: gate })));
        expect(err.retryable).toBe(true);
        expect(err.retryAfterMs).toBeGreaterThan(50_000);
        expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
        expect(err.message).toMatch(/429/);
        expect(err.message).toMatch(/Rate limit reached/);
        expect(log).toEqual([`begin:answer`, `busy:answer:${err.retryAfterMs}`, "failed:answer"]);
      }
      // The client itself never retried: one request per call.
      expect(limited.requests.map((r) => r.status)).toEqual([200, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it("5xx is retryable and other 4xx are not; the gate is told failed", async () => {
    for (const provider of ["openai", "anthropic"] as const) {
      server.failNext(1, "error500");
      const { gate, log } = recordingGate();
      const err = await failure(runLlm(block({ provider }), context({ llm: gate })));
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/induced server error/);
      expect(log).toEqual(["begin:answer", "failed:answer"]);
    }
    // Another 4xx (here a route the server does not have: 404) is not worth another try.
    for (const provider of ["openai", "anthropic"] as const) {
      const { gate, log } = recordingGate();
      const baseUrl = `${server.url}/nowhere`;
      const err = await failure(runLlm(block({ provider, baseUrl }), context({ llm: gate })));
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/404/);
      expect(log).toEqual(["begin:answer", "failed:answer"]);
    }
  });

  it("what begin throws ends the block as it is, with no request made", async () => {
    const halt = new Error("credits used up");
    const gate: LlmCalls = {
      begin: async () => {
        throw halt;
      },
    };
    const before = server.requests.length;
    const err = await runLlm(block(), context({ llm: gate })).catch((e: unknown) => e);
    expect(err).toBe(halt);
    expect(since(before)).toHaveLength(0);
  });

  it("without the secret LLM_API_KEY it fails at once, not retryable, and sends nothing", async () => {
    const before = server.requests.length;
    const err = await failure(runLlm(block(), context({ secrets: { OTHER: "x" } })));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/set the workspace secret LLM_API_KEY/);
    expect(since(before)).toHaveLength(0);
  });

  it("an abort rejects at once with the signal's reason, and the gate is told failed", async () => {
    const slow = await startLlmServer({ delayMs: 10_000 });
    try {
      for (const provider of ["openai", "anthropic"] as const) {
        const controller = new AbortController();
        const { gate, log } = recordingGate();
        const baseUrl = provider === "openai" ? slow.openaiBaseUrl : slow.url;
        const outcome = runLlm(
          block({ provider, baseUrl }),
          context({ signal: controller.signal, llm: gate }),
        ).then(
          () => "resolved",
          (e: unknown) => e,
        );
        const arrived = slow.requests.length + 1;
        while (slow.requests.length < arrived) await new Promise((r) => setTimeout(r, 5));
        const reason = new Error("stopped");
        controller.abort(reason);
        expect(await outcome).toBe(reason);
        expect(log).toEqual(["begin:answer", "failed:answer"]);
      }
    } finally {
      await slow.close();
    }
  });
});

describe("the usage a provider reports is not trusted", () => {
  const PROMPT = "Describe Ada in 3 words";
  const usageOf = (provider: "openai" | "anthropic", input: unknown, output: unknown) =>
    provider === "openai"
      ? { prompt_tokens: input, completion_tokens: output }
      : { input_tokens: input, output_tokens: output };

  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: no usage at all, or fields missing: the estimate is charged and reported`, async () => {
      for (const setup of [
        () => {
          server.options.omitUsage = true;
        },
        () => {
          server.options.omitUsage = false;
          server.options.usage = {};
        },
        () => {
          server.options.usage = usageOf(provider, "12", 3.5);
        },
        () => {
          server.options.usage = usageOf(provider, -4, null);
        },
      ]) {
        setup();
        const { gate, usages } = recordingGate();
        const result = await runLlm(block({ provider }), context({ llm: gate }));
        const text = (result.output as { text: string }).text;
        const estimate = {
          inputTokens: estimateTokens(PROMPT),
          outputTokens: estimateTokens(text),
        };
        expect(usages).toEqual([estimate]);
        expect(result.details?.llm?.ask).toMatchObject(estimate);
      }
    });

    it(`${provider}: an absurd count is charged at most maxTokens out and 4× the estimate + 1,000 in`, async () => {
      for (const absurd of [1e300, 2 ** 53 - 1, 5_000_000]) {
        server.options.usage = usageOf(provider, absurd, absurd);
        const { gate, usages } = recordingGate();
        const result = await runLlm(block({ provider, maxTokens: 50 }), context({ llm: gate }));
        const bounded = { inputTokens: 4 * estimateTokens(PROMPT) + 1_000, outputTokens: 50 };
        // 1e300 is no integer count at all: the estimate; the others are bounded.
        const text = (result.output as { text: string }).text;
        expect(usages).toEqual([
          absurd === 1e300
            ? { inputTokens: estimateTokens(PROMPT), outputTokens: estimateTokens(text) }
            : bounded,
        ]);
      }
    });

    it(`${provider}: a count within bounds is charged as the provider gave it`, async () => {
      server.options.usage = usageOf(provider, 4 * estimateTokens(PROMPT) + 1_000, 50);
      const { gate, usages } = recordingGate();
      await runLlm(block({ provider, maxTokens: 50 }), context({ llm: gate }));
      expect(usages).toEqual([
        { inputTokens: 4 * estimateTokens(PROMPT) + 1_000, outputTokens: 50 },
      ]);
    });
  }

  it("the input bound counts the schema sent with the call (a tool or a response format)", async () => {
    server.options.usage = usageOf("anthropic", 1_000_000, 1);
    const { gate, usages } = recordingGate();
    await runLlm(block({ provider: "anthropic", jsonSchema: SCHEMA }), context({ llm: gate }));
    const bound = 4 * (estimateTokens(PROMPT) + estimateTokens(JSON.stringify(SCHEMA))) + 1_000;
    expect(usages).toEqual([{ inputTokens: bound, outputTokens: 1 }]);
  });
});

describe("an answer too long to check", () => {
  for (const provider of ["openai", "anthropic"] as const) {
    it(`${provider}: over 1 MiB with a jsonSchema fails the block, not retryable, with no repair call`, async () => {
      server.options.answerText = JSON.stringify({ size: "a".repeat(1 << 20) });
      const before = server.requests.length;
      const { gate, log } = recordingGate();
      const err = await failure(
        runLlm(block({ provider, jsonSchema: SCHEMA }), context({ llm: gate })),
      );
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/over the 1048576 a jsonSchema answer may have/);
      expect(since(before)).toHaveLength(1);
      expect(log).toEqual(["begin:answer", "answered:answer"]);
    });
  }
});
