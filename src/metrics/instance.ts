/**
 * The process's one set of metrics, with the Node process metrics: on globalThis, because
 * Next.js may load a second copy of this module for the API routes, and a process reads
 * its CPU and memory once (two registries would each count them, and the sum twice).
 */
import { Metrics } from "./registry";

const holder = globalThis as { __cellflowMetrics?: Metrics };

export function processMetrics(): Metrics {
  holder.__cellflowMetrics ??= new Metrics({ processMetrics: true });
  return holder.__cellflowMetrics;
}
