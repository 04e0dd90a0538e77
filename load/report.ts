/** The load script's printed summary: one line per endpoint group, then SSE and dispatch. */
import type { Completeness } from "./sse";
import type { GroupFigures } from "./traffic";

export interface LoadResult {
  loadSeconds: number;
  machine: { cpus: number; loadAvgBefore: number[]; loadAvgAfter: number[] };
  dispatch: {
    baselineCellsPerSec: number | null;
    underLoadCellsPerSec: number;
    status: string;
    cellsNotCompleted: number;
  };
  http: GroupFigures[];
  sse: Completeness;
  sequenceTransactionsDuringLoad: number;
  /** CPU seconds the API process used per second of load (1 = one core busy). */
  apiCpuShare: number;
  /** Cores used on average during the load, per process (see cpu.ts). */
  cpuCoresDuringLoad: Record<string, number>;
}

const pad = (s: string | number, n: number) => String(s).padStart(n);

export function printSummary(r: LoadResult, say: (line: string) => void): void {
  say("");
  say(
    `${"endpoint group".padEnd(24)}${pad("requests", 9)}${pad("req/s", 8)}${pad("p50 ms", 8)}${pad("p90 ms", 8)}${pad("p99 ms", 8)}${pad("max ms", 8)}${pad("non-2xx", 8)}${pad("errors", 7)}`,
  );
  for (const g of r.http) {
    say(
      `${g.group.padEnd(24)}${pad(g.requests, 9)}${pad(g.requestsPerSec, 8)}${pad(g.p50, 8)}${pad(g.p90, 8)}${pad(g.p99, 8)}${pad(g.max, 8)}${pad(g.non2xx, 8)}${pad(g.errors + g.timeouts, 7)}`,
    );
  }
  const s = r.sse;
  say("");
  say(
    `SSE: ${s.complete}/${s.clients} clients received all ${s.expectedEvents} events; missing ${s.missing}, duplicates ${s.duplicates}, out of order ${s.outOfOrder}, reconnects ${s.reconnects}, resets ${s.resets}`,
  );
  for (const e of s.errors.slice(0, 5)) say(`  SSE note: ${e}`);
  const d = r.dispatch;
  say(
    `dispatch: ${d.underLoadCellsPerSec} cells/s under load vs ${d.baselineCellsPerSec ?? "n/a"} without (${d.status}, ${d.cellsNotCompleted} cells not completed)`,
  );
  say(
    `API process: ${r.sequenceTransactionsDuringLoad} event sequence transactions in ${r.loadSeconds} s of load; CPU ${r.apiCpuShare} of a core`,
  );
  say(
    `machine: ${r.machine.cpus} CPUs, load average ${r.machine.loadAvgBefore.map((x) => x.toFixed(2)).join(" ")} before, ${r.machine.loadAvgAfter.map((x) => x.toFixed(2)).join(" ")} after`,
  );
  say(
    `cores used during the load: ${Object.entries(r.cpuCoresDuringLoad)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
  const reads = r.http.filter((g) => g.group.startsWith("GET"));
  const ok =
    r.http.every((g) => g.non2xx === 0 && g.errors === 0) &&
    reads.every((g) => g.p99 < 250) &&
    s.complete === s.clients;
  say(
    ok
      ? "target met: no errors, row reads p99 < 250 ms, every SSE client got every event"
      : "target missed",
  );
}
