/**
 * The carrier's coalesced wake-ups: its per-cell statements send no NOTIFY (one would
 * serialise every commit in the cluster), so a burst of writes to a table must still
 * wake that table's streams, once per burst, after the writes committed.
 */

import { createDatabase, type SessionClient } from "@db/client";
import { getDatabase } from "@db/instance";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { log } from "@/config/log";
import { EVENTS_CHANNEL } from "@/events/hub";
import { TableWaker } from "@/events/waker";
import { testDatabaseUrl, useTestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/processes";

let listener: SessionClient;
let waker: TableWaker;
const received: string[] = [];

beforeAll(async () => {
  await useTestDatabase();
  waker = new TableWaker(getDatabase());
  listener = await getDatabase().pool.connect();
  listener.on("notification", (msg) => {
    if (msg.channel === EVENTS_CHANNEL && msg.payload) received.push(msg.payload);
  });
  await listener.query(`listen ${EVENTS_CHANNEL}`);
});

afterAll(() => listener.release(true));

describe("table wake-ups", () => {
  it("a burst of wakes for one table sends one notification; another table gets its own", async () => {
    received.length = 0;
    for (let i = 0; i < 20; i++) waker.wake("tbl_a");
    waker.wake("tbl_b");
    expect(await waitFor(() => received.length >= 2, 5_000, 5)).toBe(true);
    // Give a wrongly repeated notification the time to arrive before counting.
    await listener.query("select 1");
    expect(received.filter((t) => t === "tbl_a")).toHaveLength(1);
    expect(received.filter((t) => t === "tbl_b")).toHaveLength(1);
  });

  it("a wake after the last one went out sends a new notification", async () => {
    received.length = 0;
    waker.wake("tbl_c");
    expect(await waitFor(() => received.length === 1, 5_000, 5)).toBe(true);
    waker.wake("tbl_c");
    expect(await waitFor(() => received.length === 2, 5_000, 5)).toBe(true);
  });

  it("a wake scheduled before its database closed is dropped quietly", async () => {
    received.length = 0;
    const url = testDatabaseUrl();
    if (!url) throw new Error("no test database");
    const warn = vi.spyOn(log(), "warn");
    const closing = createDatabase({ url, poolMax: 1 });
    new TableWaker(closing).wake("tbl_closed");
    await closing.close();
    // A wake scheduled after it fires after it: once it arrives, the first one has run.
    waker.wake("tbl_after");
    expect(await waitFor(() => received.includes("tbl_after"), 5_000, 5)).toBe(true);
    expect(received).not.toContain("tbl_closed");
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });
});
