/**
 * A local OTLP/HTTP trace sink for measuring the engine with tracing on: counts the spans
 * it is sent (JSON, `/v1/traces`, answered 200 at once) and keeps none. Start it, then
 * point the benchmark at it:
 *
 *   node --import tsx bench/otlp-sink.ts            # listens on 127.0.0.1:4318
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 BENCH_ONLY=w1 npm run bench
 *
 * OTEL_SINK_PORT picks another port. It prints the spans received every 5 s while they
 * arrive, and the total on Ctrl-C.
 */
import { startOtlpReceiver } from "../test/helpers/otlp-receiver";

const port = Number(process.env.OTEL_SINK_PORT ?? 4318);
const sink = await startOtlpReceiver({ port, keep: false });
const say = (line: string) => process.stdout.write(`[otlp-sink] ${line}\n`);
say(`listening: OTEL_EXPORTER_OTLP_ENDPOINT=${sink.endpoint}`);
let shown = 0;
setInterval(() => {
  if (sink.received() === shown) return;
  shown = sink.received();
  say(`${shown} spans in ${sink.requests()} exports`);
}, 5_000).unref();
process.once("SIGINT", () => {
  say(`${sink.received()} spans in ${sink.requests()} exports`);
  void sink.close().then(() => process.exit(0));
});
