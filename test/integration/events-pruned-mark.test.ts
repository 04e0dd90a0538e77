/**
 * Where a table's stream history starts: one past the highest position pruning deleted of
 * the table's events (its pruned mark), not the lowest position kept anywhere. A cursor
 * below it gets `reset`; a cursor at it gets every event after it; another table's
 * deletion, or its backlog sequenced late and pruned, moves nothing.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeEventHub } from "@/events/instance";
import { appendEvent } from "@/store/events/append";
import { pruneEvents } from "@/store/events/prune";
import { eventBounds } from "@/store/events/read";
import { sequenceEvents } from "@/store/events/sequence";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { openEvents } from "../helpers/sse";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});
afterAll(() => closeEventHub());

async function newTable(name: string): Promise<string> {
  const res = await apiClient(key).POST("/api/tables", {
    body: { name, columns: [{ id: "a", name: "A", type: "text" }] },
  });
  return dataOf(res).id;
}

/** `n` sequenced `rows` events of the table; their positions, in order. */
async function events(tableId: string, n: number): Promise<number[]> {
  for (let i = 0; i < n; i++)
    await appendEvent(db(), tableId, "rows", { op: "update", rowIds: [`r${i}`] });
  await sequenceEvents(db(), tableId);
  const rows = await queryRows<{ seq: number }>(
    db(),
    sql`select seq::bigint as seq from events where table_id = ${tableId} order by seq desc limit ${n}`,
  );
  return rows.map((r) => Number(r.seq)).reverse();
}

/** Ages the events at or below `seq` past a day's retention, then prunes as maintenance does. */
async function pruneThrough(seq: number): Promise<number> {
  await db().execute(
    sql`update events set created_at = now() - interval '2 days' where seq <= ${seq}`,
  );
  return pruneEvents(db(), 24);
}

/** The table's pruned mark; 0 without one (nothing of it pruned). */
const mark = async (tableId: string) =>
  Number(
    (
      await queryRows<{ s: number }>(
        db(),
        sql`select through_seq as s from events_pruned where table_id = ${tableId}`,
      )
    )[0]?.s ?? 0,
  );

describe("the pruned mark", () => {
  it("starts at nothing pruned on a fresh database: every cursor is in history", async () => {
    const t = await newTable("fresh");
    expect(await mark(t)).toBe(0);
    expect((await eventBounds(db(), t)).oldest).toBe(1);
  });

  it("pruning raises it to the highest position it deleted; a cursor below gets reset, one at it gets the rest", async () => {
    const t = await newTable("pruned");
    const seqs = await events(t, 6);
    const cut = seqs[2] as number;
    expect(await pruneThrough(cut)).toBeGreaterThanOrEqual(3);
    expect(await mark(t)).toBe(cut);
    expect((await eventBounds(db(), t)).oldest).toBe(cut + 1);

    const behind = await openEvents(key, t, { after: cut - 1 });
    await behind.waitFor((ev) => ev.length >= 1);
    await behind.close();
    expect(behind.events[0]?.event).toBe("reset");

    const atMark = await openEvents(key, t, { after: cut });
    await atMark.waitFor((ev) => ev.length >= 3);
    await atMark.close();
    expect(atMark.events.map((e) => e.id)).toEqual(seqs.slice(3));
    expect(atMark.events.some((e) => e.event === "reset")).toBe(false);
  });

  it("never goes down: a later pass that deletes only lower positions, or unsequenced ones, leaves it", async () => {
    const t = await newTable("late");
    const [low, high] = await events(t, 2);
    // The later position aged first (a transaction that committed, and was sequenced,
    // after a younger one): pruned alone, it sets the mark.
    await db().execute(
      sql`update events set created_at = now() - interval '2 days' where seq = ${high as number}`,
    );
    expect(await pruneEvents(db(), 24)).toBeGreaterThanOrEqual(1);
    expect(await mark(t)).toBe(high);
    expect(await pruneThrough(low as number)).toBeGreaterThanOrEqual(1);
    expect(await mark(t)).toBe(high);
    // An unsequenced straggler older than retention (seq null) pruned on its own.
    await db().execute(
      sql`insert into events (table_id, kind, data, created_at)
          values (${t}, 'rows', '{}', now() - interval '3 days')`,
    );
    expect(await pruneEvents(db(), 24)).toBe(1);
    expect(await mark(t)).toBe(high);
  });

  it("another table's deletion moves no stream's history (the lowest kept position would)", async () => {
    // Everything so far pruned: the deleted table's events will be the lowest kept.
    await pruneThrough(Number.MAX_SAFE_INTEGER);
    const gone = await newTable("to delete");
    const goneSeqs = await events(gone, 3);
    const kept = await newTable("kept");
    const keptSeqs = await events(kept, 2);
    const before = await mark(kept);
    expect(before).toBeLessThan(goneSeqs[0] as number);
    expect(
      (await apiClient(key).DELETE("/api/tables/{id}", { params: { path: { id: gone } } })).response
        .status,
    ).toBe(204);
    expect(await mark(kept)).toBe(before);
    // A cursor from before the deleted table's events is still in this table's history.
    const cursor = (goneSeqs[0] as number) - 1;
    const stream = await openEvents(key, kept, { after: cursor });
    await stream.waitFor((ev) => ev.length >= keptSeqs.length + 1);
    await stream.close();
    expect(stream.events.some((e) => e.event === "reset")).toBe(false);
    const keptAll = await queryRows<{ seq: number }>(
      db(),
      sql`select seq::bigint as seq from events where table_id = ${kept} and seq > ${cursor} order by seq`,
    );
    expect(keptAll.map((r) => Number(r.seq))).toEqual(expect.arrayContaining(keptSeqs));
    expect(stream.events.map((e) => e.id)).toEqual(keptAll.map((r) => Number(r.seq)));
  });

  it("a table's backlog sequenced late and then pruned moves no other table's history", async () => {
    const quiet = await newTable("nobody watching");
    const watched = await newTable("watched");
    // Unsequenced for hours: nobody had the table's stream open.
    await db().execute(
      sql`insert into events (table_id, kind, data, created_at)
          select ${quiet}, 'rows', '{"op":"update","rowIds":["old"]}', now() - interval '3 days'
            from generate_series(1, 3)`,
    );
    const watchedSeqs = await events(watched, 2);
    // Its stream opens: the backlog gets positions after the watched table's events.
    await sequenceEvents(db(), quiet);
    expect(await pruneEvents(db(), 24)).toBeGreaterThanOrEqual(3);
    expect(await mark(quiet)).toBeGreaterThan(watchedSeqs[1] as number);
    const cursor = (watchedSeqs[0] as number) - 1;
    const stream = await openEvents(key, watched, { after: cursor });
    await stream.waitFor((ev) => ev.length >= 2);
    await stream.close();
    expect(stream.events.some((e) => e.event === "reset")).toBe(false);
    expect(stream.events.map((e) => e.id).slice(0, 2)).toEqual(watchedSeqs);
  });

  it("a deleted table's mark goes with the next pruning pass", async () => {
    const t = await newTable("pruned then deleted");
    const seqs = await events(t, 2);
    await pruneThrough(seqs[0] as number);
    expect(await mark(t)).toBe(seqs[0]);
    await apiClient(key).DELETE("/api/tables/{id}", { params: { path: { id: t } } });
    await pruneEvents(db(), 24);
    const [left] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events_pruned where table_id = ${t}`,
    );
    expect(left?.n).toBe(0);
  });
});
