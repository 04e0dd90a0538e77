/**
 * A stand-in for the trigger.dev HTTP API (the remote service we cannot run here), for
 * contract tests of our adapter and for the chaos run's simulated platform: it records
 * what the real SDK sends and answers the minimal bodies the SDK accepts. `failNext`
 * makes the next calls fail with a status; `outage` makes every call fail with a status
 * until a deadline (an API outage, 500s or 429s for a while). `onRun` hears every run
 * the fake accepted (task, payload, idempotency key, delay), so something can execute it;
 * `onCancel` every run a cancel ended, so that something can end it too.
 * Runs have a status: a cancel moves a live run to CANCELED once (`cancelled` counts those
 * moves, `cancelCalls` every call), answers 200 again for a cancelled run, and 404 for a
 * run the fake never had. `latency` answers every call after a delay; `holdCancels` keeps
 * cancel calls unanswered (and unapplied) until `releaseCancels`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A run the fake accepted, as the platform would queue it. */
export interface TriggeredRun {
  id: string;
  task: string;
  /** The payload the SDK serialised (its `{ json }` envelope unwrapped). */
  payload: unknown;
  idempotencyKey?: string;
  /** From the `delay` option ("<n>s"), in ms. */
  delayMs?: number;
}

export interface FakeTrigger {
  url: string;
  requests: RecordedRequest[];
  failNext(count: number, status: number): void;
  /** Every call fails with `status` for the next `ms` (answering `Retry-After: retryAfterS`). */
  outage(ms: number, status: number, retryAfterS?: number): void;
  onRun(listener: (run: TriggeredRun) => void): void;
  /** Hears every run a cancel moved to CANCELED, so what executes it can end it. */
  onCancel(listener: (runId: string) => void): void;
  /** Runs the platform has (as if triggered earlier), for tests that seed cells directly. */
  addRuns(ids: string[]): void;
  /** Runs moved to CANCELED, and how many times each (more than once would be a bug here). */
  cancelled: Map<string, number>;
  /** Cancel calls per run id, answered or not. */
  cancelCalls: Map<string, number>;
  latency(ms: number): void;
  holdCancels(): void;
  releaseCancels(): void;
  /** Cancel calls received and not answered yet (held). */
  heldCancels(): number;
  /** The most calls the fake was answering at once since the last reset. */
  maxInFlight(): number;
  resetMaxInFlight(): void;
  close(): Promise<void>;
}

interface ItemBody {
  task?: string;
  payload?: unknown;
  options?: { idempotencyKey?: string; delay?: unknown };
}

/** The SDK sends payloads as a string of its serialiser's `{ json: … }` envelope. */
function unwrapPayload(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed !== null && typeof parsed === "object" && "json" in parsed
      ? (parsed as { json: unknown }).json
      : parsed;
  } catch {
    return raw;
  }
}

/** A body the SDK sent; what it cannot parse is recorded as an item without task or payload. */
function parseItem(text: string): ItemBody {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === "object" ? (parsed as ItemBody) : {};
  } catch {
    return {};
  }
}

function delayOf(delay: unknown): number | undefined {
  const m = typeof delay === "string" ? /^(\d+)s$/.exec(delay) : null;
  return m ? Number(m[1]) * 1000 : undefined;
}

/** The fake's state: what it recorded, the runs it holds, and the faults it was told to make. */
interface FakeState {
  requests: RecordedRequest[];
  failures: { count: number; status: number };
  down: { until: number; status: number; retryAfterS: number };
  listeners: ((run: TriggeredRun) => void)[];
  cancelListeners: ((runId: string) => void)[];
  runs: number;
  batches: number;
  live: Set<string>;
  cancelled: Map<string, number>;
  cancelCalls: Map<string, number>;
  latencyMs: number;
  holding: boolean;
  held: (() => void)[];
  inFlight: number;
  peak: number;
}

type Reply = (status: number, value: unknown, headers?: Record<string, string>) => void;

export async function startFakeTrigger(): Promise<FakeTrigger> {
  const s: FakeState = {
    requests: [],
    failures: { count: 0, status: 500 },
    down: { until: 0, status: 500, retryAfterS: 0 },
    listeners: [],
    cancelListeners: [],
    runs: 0,
    batches: 0,
    live: new Set<string>(),
    cancelled: new Map<string, number>(),
    cancelCalls: new Map<string, number>(),
    latencyMs: 0,
    holding: false,
    held: [],
    inFlight: 0,
    peak: 0,
  };
  const server = http.createServer((req, res) => receive(s, req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: s.requests,
    failNext(count, status) {
      s.failures = { count, status };
    },
    outage(ms, status, retryAfterS = 1) {
      s.down = { until: Date.now() + ms, status, retryAfterS };
    },
    onRun(listener) {
      s.listeners.push(listener);
    },
    onCancel(listener) {
      s.cancelListeners.push(listener);
    },
    addRuns(ids) {
      for (const id of ids) s.live.add(id);
    },
    cancelled: s.cancelled,
    cancelCalls: s.cancelCalls,
    latency(ms) {
      s.latencyMs = ms;
    },
    holdCancels() {
      s.holding = true;
    },
    releaseCancels() {
      s.holding = false;
      const waiting = s.held;
      s.held = [];
      for (const apply of waiting) apply();
    },
    heldCancels: () => s.held.length,
    maxInFlight: () => s.peak,
    resetMaxInFlight() {
      s.peak = s.inFlight;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** One call: counted while in flight, answered once its body is in (after `latency`). */
function receive(s: FakeState, req: http.IncomingMessage, res: http.ServerResponse): void {
  let body = "";
  req.on("data", (c: Buffer) => {
    body += c.toString();
  });
  s.inFlight++;
  s.peak = Math.max(s.peak, s.inFlight);
  res.on("close", () => {
    s.inFlight--;
  });
  const answerIt = () => answer(s, req, res, body);
  req.on("end", () => {
    if (s.latencyMs > 0) setTimeout(answerIt, s.latencyMs);
    else answerIt();
  });
}

/** Records the call, then answers it: an induced failure or outage, or its route. */
function answer(s: FakeState, req: http.IncomingMessage, res: http.ServerResponse, body: string) {
  const path = req.url ?? "";
  s.requests.push({ method: req.method ?? "", path, headers: req.headers, body });
  const reply: Reply = (status, value, headers = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(value));
  };
  if (s.failures.count > 0) {
    s.failures.count--;
    return reply(s.failures.status, { error: "induced failure" }, { "retry-after": "0" });
  }
  if (Date.now() < s.down.until) {
    return reply(
      s.down.status,
      { error: "induced outage" },
      { "retry-after": String(s.down.retryAfterS) },
    );
  }
  const trigger = /^\/api\/v1\/tasks\/([^/]+)\/trigger$/.exec(path);
  if (req.method === "POST" && trigger) {
    const run = accepted(s, trigger[1] ?? "", parseItem(body));
    return reply(200, { id: run.id });
  }
  if (req.method === "POST" && path === "/api/v3/batches") {
    const parsed = JSON.parse(body) as { runCount: number };
    return reply(200, { id: `batch_${++s.batches}`, runCount: parsed.runCount, isCached: false });
  }
  const items = /^\/api\/v3\/batches\/([^/]+)\/items$/.exec(path);
  if (req.method === "POST" && items) {
    const lines = body.split("\n").filter((l) => l.trim() !== "");
    for (const line of lines) {
      const item = parseItem(line);
      accepted(s, item.task ?? "", item);
    }
    return reply(200, {
      id: items[1],
      itemsAccepted: lines.length,
      itemsDeduplicated: 0,
      sealed: true,
    });
  }
  const cancel = /^\/api\/v2\/runs\/([^/]+)\/cancel$/.exec(path);
  if (req.method === "POST" && cancel) return cancelRun(s, cancel[1] ?? "", reply);
  return reply(404, { error: `fake trigger.dev: no route for ${req.method} ${path}` });
}

/** A run the fake accepts: live until cancelled, and heard by every `onRun` listener. */
function accepted(s: FakeState, task: string, item: ItemBody): TriggeredRun {
  const delayMs = delayOf(item.options?.delay);
  const run: TriggeredRun = {
    id: `run_${++s.runs}`,
    task,
    payload: unwrapPayload(item.payload),
    ...(item.options?.idempotencyKey ? { idempotencyKey: item.options.idempotencyKey } : {}),
    ...(delayMs ? { delayMs } : {}),
  };
  s.live.add(run.id);
  for (const l of s.listeners) l(run);
  return run;
}

/** A cancel call: applied now, or held (unanswered) while `holdCancels` is on. */
function cancelRun(s: FakeState, id: string, reply: Reply) {
  s.cancelCalls.set(id, (s.cancelCalls.get(id) ?? 0) + 1);
  const apply = () => {
    if (s.live.delete(id)) {
      s.cancelled.set(id, (s.cancelled.get(id) ?? 0) + 1);
      for (const l of s.cancelListeners) l(id);
    } else if (!s.cancelled.has(id)) return reply(404, { error: "Run not found" });
    return reply(200, { id });
  };
  if (s.holding) s.held.push(apply);
  else apply();
}
