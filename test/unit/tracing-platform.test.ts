/**
 * In a trigger.dev task the platform registers its own tracer provider before the task
 * runs, and the engine registers none: once it looks (`syncTracing`, as src/trigger/deps.ts
 * does), its spans go to that provider and nest under the span the platform made active
 * (its run span). Here a provider registered the way the platform does stands in for it.
 */
import { context, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, describe, expect, it } from "vitest";
import { syncTracing, tracingOn, withSpan } from "@/tracing/spans";

const exporter = new InMemorySpanExporter();
const platform = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

afterAll(async () => {
  await platform.shutdown();
});

describe("spans under a provider the platform registered", () => {
  it("are off until a provider is registered, then nest under the platform's active span", async () => {
    expect(syncTracing()).toBe(false);
    const off = await withSpan(
      "carrier",
      () => ({ "cellflow.row.id": "r1" }),
      async (span) => span.isRecording(),
    );
    expect(off).toBe(false);

    platform.register();
    expect(syncTracing()).toBe(true);
    expect(tracingOn()).toBe(true);
    const runSpan = platform.getTracer("trigger.dev").startSpan("run row-carrier");
    await context.with(trace.setSpan(context.active(), runSpan), () =>
      withSpan(
        "carrier",
        () => ({ "cellflow.row.id": "r1" }),
        async () => {
          // Across an await, as the carrier's work is.
          await new Promise((resolve) => setImmediate(resolve));
          await withSpan(
            "attempt",
            () => ({ "cellflow.attempt": 1 }),
            async () => undefined,
          );
        },
      ),
    );
    runSpan.end();

    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const carrier = byName.get("carrier");
    const attempt = byName.get("attempt");
    expect(carrier?.attributes["cellflow.row.id"]).toBe("r1");
    expect(carrier?.parentSpanContext?.spanId).toBe(runSpan.spanContext().spanId);
    expect(attempt?.parentSpanContext?.spanId).toBe(carrier?.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(
      new Set([runSpan.spanContext().traceId]),
    );
  });
});
