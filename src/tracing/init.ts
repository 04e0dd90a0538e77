/**
 * Turns tracing on in a server or worker process when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * the SDK (./sdk.ts) is imported then, and only then — unset, the process loads nothing
 * of it and every span is the api's no-op (./spans.ts). Once per process, whoever calls
 * first (the server and its in-process worker share it); on globalThis, for the second
 * copy of modules Next.js may load. Not in trigger.dev tasks: the platform registers its
 * own provider there, and the tasks only follow it (`syncTracing`).
 */
import type { RegisteredSdk } from "./sdk";
import { syncTracing } from "./spans";

export type ProcessKind = "server" | "worker";

const holder = globalThis as { __cellflowTracingSdk?: Promise<RegisteredSdk> };

/** Whether the environment asks for traces (an empty value counts as unset, as in readEnv). */
export function tracingWanted(env: Record<string, string | undefined> = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** Registers the SDK when traces are wanted; true when this process records spans. */
export async function initTracing(kind: ProcessKind): Promise<boolean> {
  if (!tracingWanted()) return false;
  holder.__cellflowTracingSdk ??= import("./sdk").then((sdk) => {
    const registered = sdk.registerSdk({
      serviceName: process.env.OTEL_SERVICE_NAME || "cellflow",
      processKind: kind,
    });
    syncTracing();
    return registered;
  });
  await holder.__cellflowTracingSdk;
  return true;
}

/** Exports the spans ended so far (a worker stopping; a test reading its receiver). */
export async function flushTracing(): Promise<void> {
  await (await holder.__cellflowTracingSdk)?.flush();
}

/** Exports what is left and stops recording (the process is ending). */
export async function shutdownTracing(): Promise<void> {
  await (await holder.__cellflowTracingSdk)?.shutdown();
}
