/**
 * The OpenTelemetry SDK of a Cellflow process (server, worker): spans batched to the
 * OTLP/HTTP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT (JSON, `/v1/traces`; the exporter reads
 * the OTEL_EXPORTER_OTLP_* variables itself), sampled as OTEL_TRACES_SAMPLER says (the
 * provider reads it), with W3C trace context. Only ever imported dynamically, by ./init.ts
 * when the endpoint is set: with it unset none of these packages load.
 */
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";

export interface RegisteredSdk {
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

export function registerSdk(opts: { serviceName: string; processKind: string }): RegisteredSdk {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: opts.serviceName,
      "cellflow.process": opts.processKind,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The AsyncLocalStorage context manager (a span's children are what it awaits) and the
  // propagator of `traceparent`, which is all a run keeps of its span.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return { flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}
