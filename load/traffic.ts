/**
 * The HTTP traffic of the load script: one autocannon instance per endpoint group, so each
 * group's latency histogram, rate, non-2xx and errors are its own.
 */
import autocannon from "autocannon";

export interface GroupFigures {
  group: string;
  requests: number;
  requestsPerSec: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export interface Traffic {
  stop(): Promise<GroupFigures[]>;
}

export interface TrafficOptions {
  port: number;
  key: string;
  tableId: string;
  rowIds: string[];
  pageCursors: (string | null)[];
  readConnections: number;
  writeConnections: number;
  /**
   * Requests per second each read (write) group offers, spread over its connections; 0:
   * as fast as the connections go (closed loop). A closed loop measures the server's
   * saturation point: its latency is connections ÷ throughput by construction, so the
   * latency target is read at a fixed offered rate instead.
   */
  readRate: number;
  writeRate: number;
}

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

function figures(group: string, r: autocannon.Result): GroupFigures {
  const codes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) codes[code] = v.count ?? 0;
  return {
    group,
    requests: r.requests.total,
    requestsPerSec: +(r.requests.total / Math.max(1, r.duration)).toFixed(1),
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: codes,
  };
}

/** Starts every group; they run until stop(), which answers each group's figures. */
export function startTraffic(o: TrafficOptions): Traffic {
  const headers = { authorization: `Bearer ${o.key}`, "content-type": "application/json" };
  const base = `http://127.0.0.1:${o.port}`;
  const rows = `/api/tables/${o.tableId}/rows`;
  let inserted = 0;
  const groups: [string, number, number, autocannon.Request][] = [
    [
      "GET row",
      o.readConnections,
      o.readRate,
      { method: "GET", setupRequest: (r) => ({ ...r, path: `${rows}/${pick(o.rowIds)}` }) },
    ],
    [
      "GET rows (page of 100)",
      o.readConnections,
      o.readRate,
      {
        method: "GET",
        setupRequest: (r) => {
          const cursor = pick(o.pageCursors);
          const qs = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
          return { ...r, path: `${rows}?limit=100${qs}` };
        },
      },
    ],
    [
      "POST rows (10 rows)",
      o.writeConnections,
      o.writeRate,
      {
        method: "POST",
        setupRequest: (r) => ({
          ...r,
          path: rows,
          body: JSON.stringify({
            rows: Array.from({ length: 10 }, () => ({ data: { note: `load ${inserted++}` } })),
          }),
        }),
      },
    ],
    [
      "PATCH row",
      o.writeConnections,
      o.writeRate,
      {
        method: "PATCH",
        setupRequest: (r) => ({
          ...r,
          path: `${rows}/${pick(o.rowIds)}`,
          body: JSON.stringify({ data: { note: `edited ${Date.now()}` } }),
        }),
      },
    ],
  ];
  const running = groups.map(([group, connections, rate, request]) => {
    let instance: autocannon.Instance | undefined;
    const result = new Promise<GroupFigures>((resolve, reject) => {
      instance = autocannon(
        {
          url: base,
          connections,
          ...(rate > 0 ? { overallRate: rate } : {}),
          // Stopped by stop(); the duration only bounds a run whose dispatch never ends.
          duration: 3_600,
          headers,
          requests: [request],
          timeout: 30,
        },
        (err, r) => (err ? reject(err) : resolve(figures(group, r))),
      );
    });
    return { stop: () => instance?.stop(), result };
  });
  return {
    async stop() {
      for (const g of running) g.stop();
      return Promise.all(running.map((g) => g.result));
    },
  };
}
