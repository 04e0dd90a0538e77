/**
 * A process that loads the worker's and the route handlers' modules (every span point is
 * reached from them), starts tracing as a server or worker does (`initTracing`), runs one
 * span of each shape, then prints one JSON line: whether it records spans, whether a
 * tracer provider is registered, and which @opentelemetry packages it has loaded (all of
 * them are CommonJS, so the require cache lists every one loaded, imported or required).
 */
import { createRequire } from "node:module";
import { trace } from "@opentelemetry/api";
import "@/server/worker-runtime";
import "@/http/handler";
import { initTracing } from "@/tracing/init";
import { startSpan, tracingOn, withSpan } from "@/tracing/spans";

async function main(): Promise<void> {
  await initTracing("worker");
  await withSpan(
    "outer",
    () => ({ a: 1 }),
    async () => {
      startSpan("inner", () => ({ b: 2 })).end();
    },
  );
  const provider = trace.getTracerProvider() as { getDelegateTracer?(name: string): unknown };
  const loaded = new Set<string>();
  for (const file of Object.keys(createRequire(import.meta.url).cache)) {
    const m = /node_modules\/@opentelemetry\/([^/]+)\//.exec(file);
    if (m?.[1]) loaded.add(m[1]);
  }
  process.stdout.write(
    `${JSON.stringify({
      on: tracingOn(),
      registered: provider.getDelegateTracer?.("probe") !== undefined,
      loaded: [...loaded].sort(),
    })}\n`,
  );
  // A registered SDK's batch timer would keep the process up for its next export.
  process.exit(0);
}

void main();
