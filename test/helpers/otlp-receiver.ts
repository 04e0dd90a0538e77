/**
 * A local OTLP/HTTP receiver of traces in JSON (what @opentelemetry/exporter-trace-otlp-http
 * sends to `<endpoint>/v1/traces`): keeps every span it is sent, flattened, with its ids
 * as hex and its attributes as plain values. The tracing test reads what a cell's spans
 * link to from it; bench/otlp-sink.ts counts them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** Absent or empty: a root span. */
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: OtlpKeyValue[];
  links?: { traceId: string; spanId: string }[];
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function plainValue(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plainValue);
  return null;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plainValue(kv.value)]));
}

/** The spans of one OTLP/HTTP JSON export request. */
export function spansOf(body: OtlpTraces): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = attributesOf(rs.resource?.attributes)["service.name"];
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          name: s.name,
          traceId: s.traceId,
          spanId: s.spanId,
          ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
          attributes: attributesOf(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          service,
        });
      }
    }
  }
  return out;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter adds `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Export requests answered (each a batch of spans). */
  requests(): number;
  /** Spans received in all (kept or not). */
  received(): number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(
  /** `keep: false`: count the spans only (a long benchmark's millions). */
  opts: { port?: number; host?: string; keep?: boolean } = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  let total = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      requests++;
      try {
        const received = spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpTraces);
        total += received.length;
        if (opts.keep !== false) spans.push(...received);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    spans,
    requests: () => requests,
    received: () => total,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
