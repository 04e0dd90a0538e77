import { describe, expect, it } from "vitest";
import { parseEvents } from "@/cli/event-stream";

describe("reading the event stream", () => {
  it("hands over complete events with their id, name and JSON data", () => {
    const { events, rest } = parseEvents(
      'id: 3\nevent: cell\ndata: {"rowId":"r1","status":"running"}\n\nid: 4\nevent: dispatch\ndata: {"dispatchId":"d"}\n\nid: 5\nevent: ce',
    );
    expect(events).toEqual([
      { id: 3, event: "cell", data: { rowId: "r1", status: "running" } },
      { id: 4, event: "dispatch", data: { dispatchId: "d" } },
    ]);
    expect(rest).toBe("id: 5\nevent: ce");
  });

  it("an event split across chunks anywhere comes out once, whole", () => {
    const text =
      'id: 7\nevent: rows\ndata: {"a":1}\n\n: heartbeat\n\nid: 8\nevent: cell\ndata: {"b":2}\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const first = parseEvents(text.slice(0, cut));
      const second = parseEvents(first.rest + text.slice(cut));
      expect([...first.events, ...second.events].map((e) => e.id)).toEqual([7, 8]);
      expect(second.rest).toBe("");
    }
  });

  it("skips heartbeats and events without an id; reads CRLF and multi-line data", () => {
    const { events } = parseEvents(
      ': keep-alive\n\nevent: cell\ndata: {}\n\nid: 9\r\nevent: reset\r\ndata: {"reason":\r\ndata: "old"}\r\n\r\n',
    );
    expect(events).toEqual([{ id: 9, event: "reset", data: { reason: "old" } }]);
  });

  it("a CR at a chunk's end waits for its LF instead of ending the event early", () => {
    const a = parseEvents('id: 1\r\nevent: cell\r\ndata: {"x":1}\r\n\r');
    expect(a.events).toEqual([]);
    const b = parseEvents(`${a.rest}\n`);
    expect(b.events).toEqual([{ id: 1, event: "cell", data: { x: 1 } }]);
  });

  it("hands over a progress event, and a kind added later, as they came", () => {
    const { events } = parseEvents(
      'id: 11\nevent: progress\ndata: {"rows":2,"groups":[]}\n\nid: 12\nevent: later\ndata: {"x":1}\n\n',
    );
    expect(events).toEqual([
      { id: 11, event: "progress", data: { rows: 2, groups: [] } },
      { id: 12, event: "later", data: { x: 1 } },
    ]);
  });
});
