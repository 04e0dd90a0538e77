/**
 * The grid's event stream in the browser, over a fake EventSource: events are held until
 * the rows are read and then handed over in order, unknown or broken ones are skipped,
 * and a stream the server closed for good is reopened after the last event seen.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { TableEvent } from "@/contracts/events";
import { limitNotice, openTableStream, type StreamState } from "@/ui/grid/table-stream";

class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static opened: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  readonly listeners = new Map<string, (e: MessageEvent) => void>();
  constructor(readonly url: string) {
    FakeEventSource.opened.push(this);
  }
  addEventListener(type: string, listener: (e: MessageEvent) => void) {
    this.listeners.set(type, listener);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data: unknown, lastEventId = "") {
    const raw = typeof data === "string" ? data : JSON.stringify(data);
    this.listeners.get(type)?.(new MessageEvent(type, { data: raw, lastEventId }));
  }
}

const latest = () => {
  const s = FakeEventSource.opened.at(-1);
  if (!s) throw new Error("no stream opened");
  return s;
};

const rows = (op: string, rowIds: string[]) => ({ op, rowIds });

beforeEach(() => {
  FakeEventSource.opened = [];
  vi.stubGlobal("EventSource", FakeEventSource);
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

function open() {
  const events: TableEvent[] = [];
  const states: StreamState[] = [];
  const stream = openTableStream("t1", {
    event: (e) => events.push(e),
    state: (s) => states.push(s),
  });
  return { stream, events, states };
}

describe("the table's event stream", () => {
  it("holds events until released, then hands them over in order, and later ones as they come", () => {
    const { stream, events } = open();
    expect(latest().url).toBe("/api/tables/t1/events");
    latest().emit("rows", rows("insert", ["r1"]), "1");
    latest().emit("rows", rows("delete", ["r2"]), "2");
    expect(events).toEqual([]);
    stream.release();
    latest().emit("rows", rows("update", ["r3"]), "3");
    expect(events.map((e) => e.event === "rows" && e.data.rowIds[0])).toEqual(["r1", "r2", "r3"]);
    stream.close();
  });

  it("skips data that is no JSON or does not fit its kind", () => {
    const { stream, events } = open();
    stream.release();
    latest().emit("rows", "{not json");
    latest().emit("rows", { op: "insert" });
    latest().emit("schema", { schemaVersion: 2, name: "T" });
    expect(events).toEqual([{ event: "schema", data: { schemaVersion: 2, name: "T" } }]);
    stream.close();
  });

  it("reopens a stream closed for good after the last event seen, two seconds later", () => {
    const { stream, states } = open();
    const first = latest();
    first.onopen?.();
    first.emit("dispatch", { dispatchId: "d", status: "active" }, "41");
    first.readyState = FakeEventSource.CLOSED;
    first.onerror?.();
    expect(states).toEqual(["live", "reconnecting"]);
    expect(FakeEventSource.opened).toHaveLength(1);
    vi.advanceTimersByTime(2_000);
    expect(latest().url).toBe("/api/tables/t1/events?after=41");
    // A passing error (the browser reconnects by itself) opens nothing new.
    latest().readyState = FakeEventSource.OPEN;
    latest().onerror?.();
    vi.advanceTimersByTime(2_000);
    expect(FakeEventSource.opened).toHaveLength(2);
    stream.close();
  });

  it("opens nothing more once closed", () => {
    const { stream } = open();
    latest().readyState = FakeEventSource.CLOSED;
    latest().onerror?.();
    stream.close();
    vi.advanceTimersByTime(5_000);
    expect(FakeEventSource.opened).toHaveLength(1);
  });

  it("words a limit by its reason", () => {
    const data = { dispatchId: "d", haltReason: "x", message: "10 of 10 credits used" };
    expect(limitNotice({ ...data, reason: "run_credit_cap" })).toBe(
      "Credit cap reached — 10 of 10 credits used",
    );
    expect(limitNotice({ ...data, reason: "credits" })).toBe(
      "Usage limit reached — 10 of 10 credits used",
    );
  });
});
