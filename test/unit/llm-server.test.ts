/**
 * The local LLM server (test/helpers/llm-server.ts) counts tokens exactly as the
 * reservation estimates them, answers deterministically from the prompt or the schema,
 * and holds its own requests- and tokens-per-window limits with 429s that say how long.
 * Tests and the W7 bench lean on these figures, so they are checked here first.
 */
import { Ajv } from "ajv";
import { afterEach, describe, expect, it } from "vitest";
import { estimateTokens } from "@/domain/llm-tokens";
import { seedOf, textAnswer, valueForSchema, violationOf } from "../helpers/llm-answers";
import { type LlmServer, type LlmServerOptions, startLlmServer } from "../helpers/llm-server";

const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 3, maxLength: 20 },
    size: { type: "string", enum: ["small", "medium", "large"] },
    score: { type: "number", minimum: 1, maximum: 5 },
    employees: { type: "integer", minimum: 10 },
    public: { type: "boolean" },
    kind: { const: "company" },
    tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 3 },
    address: {
      type: "object",
      properties: { city: { type: "string" }, zip: { type: ["string", "null"] } },
      required: ["city", "zip"],
      additionalProperties: false,
    },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
  required: ["name", "size", "score", "employees", "public", "kind", "tags", "address", "note"],
  additionalProperties: false,
};

describe("schema-driven answers", () => {
  const validate = new Ajv({ strict: false }).compile(SCHEMA);

  it("a value built from the schema validates, for many prompts, and is the same every time", () => {
    const sizes = new Set<unknown>();
    for (let i = 0; i < 200; i++) {
      const seed = seedOf(`row ${i}`);
      const value = valueForSchema(SCHEMA, seed);
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
      expect(valueForSchema(SCHEMA, seed)).toEqual(value);
      sizes.add((value as { size: unknown }).size);
    }
    // Rows get different answers: every enum value comes up.
    expect([...sizes].sort()).toEqual(["large", "medium", "small"]);
  });

  it("a violation of the schema is refused by a validator", () => {
    expect(validate(violationOf(SCHEMA))).toBe(false);
    expect(validate.errors?.length).toBeGreaterThan(0);
  });

  it("a text answer quotes the prompt and is cut at the output cap", () => {
    expect(textAnswer("hello", 100)).toEqual({ text: "Answer: hello", cut: false });
    const cut = textAnswer("x".repeat(100), 5);
    expect(cut).toEqual({ text: `Answer: ${"x".repeat(12)}`, cut: true });
    expect(estimateTokens(cut.text)).toBe(5);
  });
});

describe("the local LLM server", () => {
  let server: LlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(opts: LlmServerOptions = {}): Promise<LlmServer> {
    server = await startLlmServer(opts);
    return server;
  }

  async function openai(s: LlmServer, body: Record<string, unknown>) {
    const res = await fetch(`${s.openaiBaseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer k-1" },
      body: JSON.stringify(body),
    });
    return { res, json: (await res.json()) as unknown };
  }

  async function anthropic(s: LlmServer, body: Record<string, unknown>) {
    const res = await fetch(`${s.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "k-2",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
    return { res, json: (await res.json()) as unknown };
  }

  it("OpenAI dialect: usage is estimateTokens of each message in, of the answer out", async () => {
    const s = await start();
    const system = "You are terse.";
    const prompt = "Describe Ada Lovelace";
    const { res, json } = await openai(s, {
      model: "m",
      max_tokens: 50,
      messages: [
        { role: "system", content: system },
        { role: "user", content: prompt },
      ],
    });
    expect(res.status).toBe(200);
    const text = `Answer: ${prompt}`;
    expect(json).toMatchObject({
      choices: [{ message: { content: text }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: estimateTokens(system) + estimateTokens(prompt),
        completion_tokens: estimateTokens(text),
      },
    });
    expect(s.requests[0]).toMatchObject({
      dialect: "openai",
      model: "m",
      apiKey: "k-1",
      maxTokens: 50,
      inputTokens: estimateTokens(system) + estimateTokens(prompt),
      outputTokens: estimateTokens(text),
      status: 200,
    });
  });

  it("Anthropic dialect: the forced tool call carries a value of the schema; the system prompt counts", async () => {
    const s = await start();
    const { res, json } = await anthropic(s, {
      model: "claude-x",
      max_tokens: 200,
      system: "Extract fields.",
      messages: [{ role: "user", content: "ACME Corp, Berlin" }],
      tools: [{ name: "output", input_schema: SCHEMA }],
      tool_choice: { type: "tool", name: "output" },
    });
    expect(res.status).toBe(200);
    const value = valueForSchema(SCHEMA, seedOf("ACME Corp, Berlin"));
    expect(json).toMatchObject({
      content: [{ type: "tool_use", name: "output", input: value }],
      stop_reason: "tool_use",
      usage: {
        input_tokens: estimateTokens("Extract fields.") + estimateTokens("ACME Corp, Berlin"),
        output_tokens: estimateTokens(JSON.stringify(value)),
      },
    });
    expect(s.requests[0]?.messages[0]).toEqual({ role: "system", content: "Extract fields." });
    expect(s.requests[0]?.apiKey).toBe("k-2");
  });

  it("holds its requests per window: the call over the limit gets 429 with when to come back", async () => {
    const s = await start({ requestsPerMinute: 2, windowMs: 400 });
    const ask = () => openai(s, { model: "m", messages: [{ role: "user", content: "hi" }] });
    expect((await ask()).res.status).toBe(200);
    expect((await ask()).res.status).toBe(200);
    const refused = await ask();
    expect(refused.res.status).toBe(429);
    const waitMs = Number(refused.res.headers.get("retry-after-ms"));
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(400);
    expect(refused.res.headers.get("retry-after")).toBe(String(Math.ceil(waitMs / 1000)));
    await new Promise((r) => setTimeout(r, waitMs + 5));
    expect((await ask()).res.status).toBe(200);
  });

  it("holds its tokens per window (input + output), and a 429 does not count", async () => {
    const prompt = "x".repeat(40); // 10 tokens in; answer "Answer: " + 40 chars = 12 out
    const s = await start({ tokensPerMinute: 50, windowMs: 60_000 });
    const ask = () => openai(s, { model: "m", messages: [{ role: "user", content: prompt }] });
    expect((await ask()).res.status).toBe(200);
    expect((await ask()).res.status).toBe(200);
    const refused = await ask();
    expect(refused.res.status).toBe(429);
    expect(Number(refused.res.headers.get("retry-after-ms"))).toBeGreaterThan(59_000);
    expect(s.peakTokens()).toBe(44);
    expect(s.requests.map((r) => r.status)).toEqual([200, 200, 429]);
  });

  it("fails on demand: a 500, an answer that is not JSON, one that breaks the schema, then answers again", async () => {
    const s = await start();
    const body = {
      model: "m",
      messages: [{ role: "user", content: "q" }],
      response_format: { type: "json_schema", json_schema: { name: "output", schema: SCHEMA } },
    };
    s.failNext(1, "error500");
    s.failNext(1, "not-json");
    s.failNext(1, "schema-violation");
    const content = async () =>
      ((await openai(s, body)).json as { choices: [{ message: { content: string } }] }).choices[0]
        .message.content;
    expect((await openai(s, body)).res.status).toBe(500);
    const notJson = await content();
    expect(() => JSON.parse(notJson)).toThrow();
    expect(JSON.parse(await content())).toEqual(violationOf(SCHEMA));
    expect(JSON.parse(await content())).toEqual(valueForSchema(SCHEMA, seedOf("q")));
  });

  it("is slow on demand", async () => {
    const s = await start({ delayMs: 150 });
    const t0 = Date.now();
    await openai(s, { model: "m", messages: [{ role: "user", content: "q" }] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
  });
});
