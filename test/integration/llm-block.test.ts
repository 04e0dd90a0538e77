/**
 * The llm block through the real OpenAI client against an OpenAI-compatible stub on
 * loopback: what it sends (model, rendered prompt, structured-output format, the key from
 * the workspace secret), what it returns, and how provider failures map to retries.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LlmBlock } from "@/contracts/workflow";
import { runLlm } from "@/execution/blocks/llm";
import { type BlockContext, BlockError } from "@/execution/blocks/types";

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

type Answer = (body: Record<string, unknown>, res: http.ServerResponse) => void;

let server: http.Server;
let base: string;
const received: Received[] = [];
let answer: Answer;

function completion(content: string | null, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: "chatcmpl-stub",
    object: "chat.completion",
    created: 1_767_225_600,
    model: "stub-model-2026-01-01",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        finish_reason: "stop",
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    ...extra,
  });
}

const answerWith =
  (content: string | null): Answer =>
  (_body, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(completion(content));
  };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString("utf8");
    });
    req.on("end", () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      received.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "no such route" } }));
        return;
      }
      answer(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterEach(() => {
  delete process.env.CELLFLOW_LLM_BASE_URL;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const API_KEY = "sk-test-workspace-key-123";

function context(
  secrets: Record<string, string> = { LLM_API_KEY: API_KEY },
  signal = new AbortController().signal,
): BlockContext {
  return {
    scope: {
      inputs: { n: 3 },
      row: { name: "Ada" },
      blocks: {},
      vars: {},
      secrets,
    },
    signal,
    executionId: "exe_llm1",
  };
}

function block(fields: Partial<LlmBlock> = {}): LlmBlock {
  return {
    id: "ask",
    type: "llm",
    baseUrl: base,
    model: "gpt-test",
    prompt: "Describe {{ row.name }} in {{ inputs.n }} words",
    ...fields,
  };
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

describe("llm block", () => {
  it("plain text: one user message with the rendered prompt, the key from the secret", async () => {
    answer = answerWith("A pioneering programmer.");
    const before = received.length;
    const result = await runLlm(block(), context());
    expect(result.output).toEqual({
      text: "A pioneering programmer.",
      model: "stub-model-2026-01-01",
    });
    expect(received.length).toBe(before + 1);
    const req = received[before];
    expect(req?.path).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.body).toMatchObject({
      model: "gpt-test",
      messages: [{ role: "user", content: "Describe Ada in 3 words" }],
    });
    expect(req?.body).not.toHaveProperty("response_format");
  });

  it("structured output: sends the json_schema format and returns the parsed object", async () => {
    const schema = {
      type: "object",
      properties: { size: { type: "string" }, score: { type: "number" } },
      required: ["size", "score"],
      additionalProperties: false,
    };
    answer = answerWith('{"size":"big","score":3}');
    const before = received.length;
    const result = await runLlm(block({ jsonSchema: schema, model: "gpt-json" }), context());
    expect(result.output).toEqual({ size: "big", score: 3 });
    const req = received[before];
    expect(req?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.body.model).toBe("gpt-json");
    expect(req?.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "output", schema, strict: true },
    });
  });

  it("an answer that is not the JSON asked for fails the block", async () => {
    answer = answerWith("Sure! Here is the JSON: {size: big}");
    const err = await failure(runLlm(block({ jsonSchema: { type: "object" } }), context()));
    expect(err.message).toMatch(/not valid JSON/);
  });

  it("without the secret LLM_API_KEY it fails at once, not retryable, and sends nothing", async () => {
    const before = received.length;
    const err = await failure(runLlm(block(), context({ OTHER: "x" })));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/set the workspace secret LLM_API_KEY/);
    expect(received.length).toBe(before);
  });

  it("429 is retryable with the provider's Retry-After, and the client itself does not retry", async () => {
    answer = (_body, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "3" });
      res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests" } }));
    };
    const before = received.length;
    const err = await failure(runLlm(block(), context()));
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(3000);
    expect(err.message).toMatch(/429/);
    expect(err.message).toMatch(/Rate limit reached/);
    expect(received.length).toBe(before + 1);
  });

  it("5xx is retryable; 400 and 401 are not", async () => {
    for (const [status, retryable] of [
      [500, true],
      [503, true],
      [400, false],
      [401, false],
    ] as const) {
      answer = (_body, res) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `induced ${status}` } }));
      };
      const err = await failure(runLlm(block(), context()));
      expect(err.retryable, String(status)).toBe(retryable);
      expect(err.message).toMatch(`induced ${status}`);
    }
  });

  it("without a baseUrl on the block, CELLFLOW_LLM_BASE_URL is the endpoint", async () => {
    process.env.CELLFLOW_LLM_BASE_URL = base;
    answer = answerWith("from the configured endpoint");
    const { baseUrl: _omit, ...rest } = block();
    const result = await runLlm(rest, context());
    expect(result.output).toMatchObject({ text: "from the configured endpoint" });
  });

  it("an abort rejects at once with the signal's reason", async () => {
    let arrived = () => {};
    const requestArrived = new Promise<void>((r) => {
      arrived = r;
    });
    answer = () => arrived(); // never answers
    const controller = new AbortController();
    const outcome = runLlm(block(), context(undefined, controller.signal)).then(
      () => "resolved",
      (e: unknown) => e,
    );
    await requestArrived;
    const reason = new Error("stopped");
    controller.abort(reason);
    expect(await outcome).toBe(reason);
  });
});
