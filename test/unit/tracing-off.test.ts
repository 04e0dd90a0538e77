/**
 * Tracing costs nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset: a process started as a
 * worker starts (initTracing), with the worker's and the route handlers' modules loaded,
 * loads no package of the trace SDK — the api's spans are no-ops — and registers no
 * tracer provider; with the endpoint set, the same
 * process loads and registers the SDK (the check sees what it should). And the
 * traceparent a run keeps reads back as the span context it was written from.
 */
import { describe, expect, it } from "vitest";
import { parseTraceparent } from "@/tracing/spans";
import { runReportingScript } from "../helpers/child-scripts";

/**
 * The packages of the trace SDK and its exporter. Not in it: the api, and what
 * @trigger.dev/sdk (the trigger backend, imported by the worker) loads of its own
 * (@opentelemetry/core, api-logs, semantic-conventions), which records nothing.
 */
const TRACE_SDK = [
  "sdk-trace-base",
  "sdk-trace-node",
  "exporter-trace-otlp-http",
  "otlp-exporter-base",
  "otlp-transformer",
  "resources",
  "context-async-hooks",
];

interface ChildReport {
  on: boolean;
  registered: boolean;
  loaded: string[];
}

function runChild(env: Record<string, string>): Promise<ChildReport> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(base)) if (name.startsWith("OTEL_")) delete base[name];
  return runReportingScript<ChildReport>(
    "test/helpers/tracing-child.ts",
    { ...base, LOG_LEVEL: "silent", ...env },
    "tracing child",
  );
}

describe("tracing off", () => {
  it("loads no SDK package and registers no provider when the endpoint is unset", async () => {
    const off = await runChild({});
    expect(off).toMatchObject({ on: false, registered: false });
    expect(off.loaded).toContain("api");
    expect(off.loaded.filter((name) => TRACE_SDK.includes(name))).toEqual([]);
  });

  it("loads and registers the SDK when the endpoint is set (the check's control)", async () => {
    // Nothing listens there; no span is exported before the child exits.
    const on = await runChild({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(on.on).toBe(true);
    expect(on.registered).toBe(true);
    expect(on.loaded).toEqual(
      expect.arrayContaining(["sdk-trace-node", "sdk-trace-base", "exporter-trace-otlp-http"]),
    );
  });
});

describe("a run's traceparent", () => {
  it("reads back as the span context it was written from", () => {
    const text = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    expect(parseTraceparent(text)).toEqual({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 1,
      isRemote: true,
    });
    for (const bad of [
      null,
      "",
      "garbage",
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
    ])
      expect(parseTraceparent(bad)).toBeNull();
  });
});
