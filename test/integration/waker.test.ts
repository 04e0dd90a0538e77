/**
 * The carrier's coalesced wake-ups: its per-cell statements send no NOTIFY (one would
 * serialise every commit in the cluster), so a burst of writes to a table must still
 * wake that table's streams, once per burst, after the writes committed.
 */

import type { SessionClient } from "@db/client";
import { getDatabase } from "@db/instance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_CHANNEL } from "@/events/hub";
import { wakeTable } from "@/events/waker";
import { useTestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/processes";

let listener: SessionClient;
const received: string[] = [];

beforeAll(async () => {
  await useTestDatabase();
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
    for (let i = 0; i < 20; i++) wakeTable(getDatabase(), "tbl_a");
    wakeTable(getDatabase(), "tbl_b");
    expect(await waitFor(() => received.length >= 2, 5_000, 5)).toBe(true);
    // Give a wrongly repeated notification the time to arrive before counting.
    await listener.query("select 1");
    expect(received.filter((t) => t === "tbl_a")).toHaveLength(1);
    expect(received.filter((t) => t === "tbl_b")).toHaveLength(1);
  });

  it("a wake after the last one went out sends a new notification", async () => {
    received.length = 0;
    wakeTable(getDatabase(), "tbl_c");
    expect(await waitFor(() => received.length === 1, 5_000, 5)).toBe(true);
    wakeTable(getDatabase(), "tbl_c");
    expect(await waitFor(() => received.length === 2, 5_000, 5)).toBe(true);
  });
});
