/**
 * The spans Cellflow makes, through @opentelemetry/api's global tracer only: whoever
 * registered a tracer provider in this process receives them — our SDK (./init.ts, when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set) or trigger.dev's own inside a task. Invariant: with
 * nobody registered, a span costs one flag read — no attributes are built (they are asked
 * for through a function), no span object is made, and `fn` runs as it would unwrapped.
 * The flag lives on globalThis: Next.js may load a second copy of this module for the API
 * routes, and the registration it mirrors is process-global too.
 */
import {
  type Attributes,
  context,
  isValidSpanId,
  isValidTraceId,
  type Link,
  ProxyTracerProvider,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

export type { Attributes, Link, Span };
export { SpanKind };

const TRACER = "cellflow";

const holder = globalThis as { __cellflowTracing?: boolean };

/** The span handed to `fn` when nothing records: every call on it is a no-op. */
const NO_SPAN: Span = trace.wrapSpanContext({
  traceId: "00000000000000000000000000000000",
  spanId: "0000000000000000",
  traceFlags: 0,
});

/** Whether spans are made in this process (a tracer provider is registered). */
export function tracingOn(): boolean {
  return holder.__cellflowTracing === true;
}

/**
 * Reads again whether a tracer provider is registered globally: after our SDK registered
 * one (./init.ts), and in a trigger.dev task, whose platform registers its own before the
 * task runs. The api's proxy has a delegate only once a provider is registered; a provider
 * of another copy of the api is not our proxy class, and is a registered one.
 */
export function syncTracing(): boolean {
  const provider = trace.getTracerProvider();
  holder.__cellflowTracing =
    !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER) !== undefined;
  return holder.__cellflowTracing;
}

function tracer(): Tracer {
  return trace.getTracer(TRACER);
}

export interface SpanOptions {
  kind?: SpanKind;
  /** Other traces this span follows from (a carrier's run). */
  links?: Link[];
}

/**
 * Runs `fn` in a span named `name`, the child of the active span (none: a new trace),
 * made the active span for whatever `fn` awaits. A throw marks the span an error and is
 * passed on; `fn` may add attributes to the span it is given.
 */
export function withSpan<T>(
  name: string,
  attributes: () => Attributes,
  fn: (span: Span) => Promise<T>,
  opts?: SpanOptions,
): Promise<T> {
  // Not async: unrecorded, `fn`'s own promise is the answer, with no wrapper around it.
  if (holder.__cellflowTracing !== true) return fn(NO_SPAN);
  const links = opts?.links;
  return tracer().startActiveSpan(
    name,
    {
      attributes: attributes(),
      kind: opts?.kind ?? SpanKind.INTERNAL,
      ...(links && links.length > 0 ? { links } : {}),
    },
    (span) => inSpan(span, fn),
  );
}

async function inSpan<T>(span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await fn(span);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * A span the caller ends itself (`span.end()`), the child of the active span, for a call
 * with nothing traced under it (a provider's request). Not recording: the no-op span.
 */
export function startSpan(name: string, attributes: () => Attributes, kind?: SpanKind): Span {
  if (holder.__cellflowTracing !== true) return NO_SPAN;
  return tracer().startSpan(name, { attributes: attributes(), kind: kind ?? SpanKind.INTERNAL });
}

/** Marks a span an error with what was thrown (its message; not its stack or data). */
export function failed(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * The active span's context as a W3C `traceparent` (null when nothing records): what a
 * run keeps with its dispatch row, so a carrier anywhere links to it.
 */
export function activeTraceparent(): string | null {
  if (holder.__cellflowTracing !== true) return null;
  const span = trace.getSpan(context.active());
  if (!span) return null;
  const c = span.spanContext();
  if (!isValidTraceId(c.traceId) || !isValidSpanId(c.spanId)) return null;
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A `traceparent` read back (null: absent, or not one). */
export function parseTraceparent(text: string | null | undefined): SpanContext | null {
  const m = text ? TRACEPARENT.exec(text) : null;
  if (!m || m[1] === "ff") return null;
  const [, , traceId = "", spanId = "", flags = "00"] = m;
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}
