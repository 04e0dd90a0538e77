/**
 * Answers at temperature 0 come from the workspace's result cache: the same provider,
 * base URL, model, system, prompt, schema and output cap reuse one answer, which asks the
 * gate for nothing and costs nothing (`details.llm.<id>.cached`); concurrent asks of one
 * key make one call (the cache's single flight); a failed call keeps nothing; a TTL of 0,
 * or a temperature above 0, calls every time.
 */
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmBlock } from "@/contracts/workflow";
import { resultCache } from "@/engine/result-cache";
import { runLlm } from "@/execution/blocks/llm";
import { type BlockContext, BlockError } from "@/execution/blocks/types";
import type { LlmCalls } from "@/execution/llm-calls";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";

const HOUR = 3_600_000;
let server: LlmServer;

beforeAll(async () => {
  await useTestDatabase();
  server = await startLlmServer();
});
afterAll(() => server.close());

let charged = 0;
/** A gate over a real result cache that charges each answer and counts its turns. */
async function cachedGate(ttlMs = HOUR): Promise<{ gate: LlmCalls; begun: () => number }> {
  const { id } = await newWorkspace();
  let begun = 0;
  const gate: LlmCalls = {
    cache: resultCache(getDatabase().db, id, { ttlMs }),
    async begin() {
      begun += 1;
      return {
        // Charged at once, as the write that records the answer would (an answer is
        // served from the cache only once its charge is recorded).
        answered: async () => {
          const charge = { chargeId: `exe_c${++charged}`, source: "llm:gpt-test@ask" };
          await getDatabase().db.execute(
            sql`insert into usage (workspace_id, execution_id, source, milli, state)
                values (${id}, ${charge.chargeId}, ${charge.source}, 1000, 'charged')`,
          );
          return { costCredits: 1, charge };
        },
        failed: async () => {},
        busy: async () => {},
      };
    },
  };
  return { gate, begun: () => begun };
}

function context(llm: LlmCalls, row: Record<string, unknown> = { name: "Ada" }): BlockContext {
  return {
    scope: { inputs: {}, row, blocks: {}, vars: {}, secrets: { LLM_API_KEY: "sk-cache-1234" } },
    signal: new AbortController().signal,
    executionId: "exe_c",
    llm,
  };
}

let n = 0;
/** A block with a prompt no other test asks, so the server's count is this test's. */
function block(fields: Partial<LlmBlock> = {}): LlmBlock {
  n += 1;
  return {
    id: "ask",
    type: "llm",
    baseUrl: server.openaiBaseUrl,
    model: "gpt-test",
    prompt: `Case ${n}: describe {{ row.name }}`,
    temperature: 0,
    ...fields,
  };
}

const cachedOf = (r: { details?: Record<string, Record<string, unknown>> }) =>
  (r.details?.llm?.ask as { cached?: boolean } | undefined)?.cached;

/** Requests the server got for prompts of this block. */
const callsFor = (b: LlmBlock) => {
  const tag = `${b.prompt.split(":")[0]}:`;
  return server.requests.filter((r) => r.messages.at(-1)?.content.startsWith(tag)).length;
};

describe("the llm answer cache", () => {
  it("two cells with the same prompt at temperature 0: one call; the second is cached, free and asks the gate nothing", async () => {
    const { gate, begun } = await cachedGate();
    const b = block({ jsonSchema: { type: "object", properties: { a: { type: "string" } } } });
    const first = await runLlm(b, context(gate));
    const second = await runLlm(b, context(gate));
    expect(callsFor(b)).toBe(1);
    expect(begun()).toBe(1);
    expect(second.output).toEqual(first.output);
    expect(first.charges).toHaveLength(1);
    expect(second.charges).toBeUndefined();
    const firstDetails = first.details?.llm?.ask as Record<string, unknown>;
    expect(firstDetails).toMatchObject({ cached: false, costCredits: 1 });
    expect(second.details?.llm?.ask).toEqual({
      model: "gpt-test",
      inputTokens: firstDetails.inputTokens,
      outputTokens: firstDetails.outputTokens,
      costCredits: 0,
      cached: true,
    });
  });

  it("concurrent asks of one key make one call (single flight)", async () => {
    const { gate } = await cachedGate();
    const b = block();
    const results = await Promise.all(Array.from({ length: 6 }, () => runLlm(b, context(gate))));
    expect(callsFor(b)).toBe(1);
    expect(new Set(results.map((r) => JSON.stringify(r.output))).size).toBe(1);
    expect(results.filter((r) => cachedOf(r))).toHaveLength(5);
  });

  it("a different row, system or output cap is a different key", async () => {
    const { gate } = await cachedGate();
    const b = block();
    await runLlm(b, context(gate));
    await runLlm(b, context(gate, { name: "Grace" }));
    await runLlm({ ...b, system: "Be terse." }, context(gate));
    await runLlm({ ...b, maxTokens: 10 }, context(gate));
    expect(callsFor(b)).toBe(4);
  });

  it("a failed call keeps nothing: the next ask calls again", async () => {
    const { gate } = await cachedGate();
    const b = block();
    server.failNext(1, "error500");
    const err = await runLlm(b, context(gate)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockError);
    const again = await runLlm(b, context(gate));
    expect(cachedOf(again)).toBe(false);
    expect(callsFor(b)).toBe(2);
  });

  it("TTL 0: every cell calls", async () => {
    const { gate } = await cachedGate(0);
    const b = block();
    await runLlm(b, context(gate));
    const second = await runLlm(b, context(gate));
    expect(callsFor(b)).toBe(2);
    expect(cachedOf(second)).toBe(false);
  });

  it("a temperature above 0 is never cached", async () => {
    const { gate } = await cachedGate();
    const b = block({ temperature: 0.7 });
    await runLlm(b, context(gate));
    await runLlm(b, context(gate));
    expect(callsFor(b)).toBe(2);
  });
});
