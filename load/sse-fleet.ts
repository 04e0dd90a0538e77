/**
 * The load script's SSE clients, run in a worker thread of their own. Parsing tens of
 * thousands of events for hundreds of clients is bursty CPU work: on the thread that runs
 * autocannon it would hold responses in their sockets and add that wait to the measured
 * latencies. Here the two only share the machine, as separate clients would.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { type ClientRecord, type SseClient, sseClient } from "./sse";

interface FleetData {
  port: number;
  tableId: string;
  key: string;
  clients: number;
}

type Ask = { kind: "behind"; position: number } | { kind: "finish" };
type Answer =
  | { kind: "connected" }
  | { kind: "behind"; count: number }
  | { kind: "finished"; records: ClientRecord[] };

export interface SseFleet {
  connected: Promise<void>;
  /** How many clients have not received position `position` yet. */
  behind(position: number): Promise<number>;
  /** Closes every client and answers what each received. */
  finish(): Promise<ClientRecord[]>;
  terminate(): Promise<void>;
}

export function startSseFleet(data: FleetData): SseFleet {
  // The thread runs this TypeScript file, so it registers tsx first (Node 20 loads a
  // worker's entry before any `--import` hook would apply to it).
  const entry = JSON.stringify(import.meta.url);
  const worker = new Worker(
    `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${entry}); });`,
    { eval: true, workerData: data },
  );
  const waiting: ((a: Answer) => void)[] = [];
  let markConnected: () => void = () => {};
  let failConnected: (err: Error) => void = () => {};
  const connected = new Promise<void>((resolve, reject) => {
    markConnected = resolve;
    failConnected = reject;
  });
  worker.on("message", (a: Answer) => {
    if (a.kind === "connected") markConnected();
    else waiting.shift()?.(a);
  });
  worker.on("error", (err) => failConnected(err));
  const ask = (q: Ask) =>
    new Promise<Answer>((resolve) => {
      waiting.push(resolve);
      worker.postMessage(q);
    });
  return {
    connected,
    async behind(position) {
      const a = await ask({ kind: "behind", position });
      return a.kind === "behind" ? a.count : 0;
    },
    async finish() {
      const a = await ask({ kind: "finish" });
      return a.kind === "finished" ? a.records : [];
    },
    async terminate() {
      await worker.terminate();
    },
  };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const d = workerData as FleetData;
  const clients: SseClient[] = [];
  for (let i = 0; i < d.clients; i++) clients.push(sseClient(d.port, d.tableId, d.key));
  void Promise.all(clients.map((c) => c.connected)).then(() =>
    port.postMessage({ kind: "connected" } satisfies Answer),
  );
  port.on("message", (q: Ask) => {
    if (q.kind === "behind") {
      const count = clients.filter((c) => c.last() < q.position).length;
      port.postMessage({ kind: "behind", count } satisfies Answer);
      return;
    }
    for (const c of clients) c.close();
    const records = clients.map(
      ({ ids, reconnects, resets, errors }): ClientRecord => ({ ids, reconnects, resets, errors }),
    );
    port.postMessage({ kind: "finished", records } satisfies Answer);
  });
}
