/**
 * The enrichment result cache: per workspace, by enrichment and normalized inputs, for
 * the TTL. A hit calls no provider and charges nothing; only answers are kept, never
 * errors; concurrent misses of one key make one provider call, across processes (the
 * claims live in Postgres); the dry run subtracts what the cache would serve. A paid
 * answer is served while its charge is pending or recorded; one whose cell was stopped
 * before its write (its reservation released, nobody charged) is asked again and
 * charged, never handed out free to a later run.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import { paidCalls } from "@/engine/paid-calls";
import type { Pause } from "@/engine/race-points";
import { CLAIM_STALE_MS, resultCache } from "@/engine/result-cache";
import { stopRuns } from "@/engine/stop";
import { getEnrichment } from "@/enrichments/registry";
import { runEnrichment } from "@/enrichments/run";
import type { CacheLookup, EnrichmentResult } from "@/enrichments/types";
import { RateLines } from "@/limits/rate/line";
import { MemoryLimiter } from "@/limits/rate/memory";
import { fillCached, releaseCached } from "@/store/enrichment-cache/fill";
import { freshCacheKeys } from "@/store/enrichment-cache/fresh-keys";
import { takeCached } from "@/store/enrichment-cache/take";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, engineDeps, runToEnd, useWorker } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { metaTable } from "../helpers/tables";

const db = () => getDatabase().db;
let url = "";
let ep: Endpoint;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  ep = await startEndpoint();
  for (const path of ["/site", "/on", "/off"])
    ep.on(path, async () => ({
      status: 200,
      body: "<title>t</title>",
      headers: { "content-type": "text/html" },
    }));
  ep.on("/gone", async () => ({ status: 404 }));
});

const HOUR = 3_600_000;
let n = 0;
const fresh = async () => ({
  workspaceId: (await newWorkspace()).id,
  enrichmentId: "e",
  inputKey: `k${++n}`,
});
const answer = (outputs: Record<string, unknown>): EnrichmentResult => ({
  outcome: "ok",
  outputs,
  details: { enrichmentId: "e", costCredits: 1, providers: [] },
});

describe("claims and answers in Postgres", () => {
  it("of concurrent takes of one key exactly one claims; the rest are busy until it answers", async () => {
    const key = await fresh();
    const takes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        takeCached(db(), { ...key, claimId: `c${i}`, ttlMs: HOUR, staleMs: CLAIM_STALE_MS }),
      ),
    );
    expect(takes.filter((t) => t.kind === "claimed")).toHaveLength(1);
    expect(takes.filter((t) => t.kind === "busy")).toHaveLength(11);
    const holder = takes.findIndex((t) => t.kind === "claimed");
    expect(
      await fillCached(db(), { ...key, claimId: `c${holder}`, outcome: "ok", outputs: { a: 1 } }),
    ).toBe("filled");
    const after = await takeCached(db(), { ...key, claimId: "late", ttlMs: HOUR, staleMs: 1 });
    expect(after).toMatchObject({ kind: "hit", outcome: "ok", outputs: { a: 1 } });
  });

  it("a released claim (the call failed) is claimed by the next caller; nothing was kept", async () => {
    const key = await fresh();
    const opts = { ttlMs: HOUR, staleMs: CLAIM_STALE_MS };
    expect(await takeCached(db(), { ...key, claimId: "a", ...opts })).toEqual({ kind: "claimed" });
    await releaseCached(db(), { ...key, claimId: "a" });
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toEqual({ kind: "claimed" });
  });

  it("a claim its holder stopped keeping live is taken over, and the old holder cannot fill it", async () => {
    const key = await fresh();
    const opts = { ttlMs: HOUR, staleMs: CLAIM_STALE_MS };
    expect(await takeCached(db(), { ...key, claimId: "dead", ...opts })).toEqual({
      kind: "claimed",
    });
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toEqual({ kind: "busy" });
    await db().execute(
      sql`update enrichment_cache set claimed_at = now() - interval '1 minute'
           where input_key = ${key.inputKey}`,
    );
    expect(await takeCached(db(), { ...key, claimId: "c", ...opts })).toEqual({ kind: "claimed" });
    expect(
      await fillCached(db(), { ...key, claimId: "dead", outcome: "ok", outputs: { stale: true } }),
    ).toBe("lost");
  });

  it("an answer past the TTL is asked again", async () => {
    const key = await fresh();
    const opts = { ttlMs: HOUR, staleMs: CLAIM_STALE_MS };
    await takeCached(db(), { ...key, claimId: "a", ...opts });
    await fillCached(db(), { ...key, claimId: "a", outcome: "not_found", outputs: {} });
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toMatchObject({
      kind: "hit",
    });
    await db().execute(
      sql`update enrichment_cache set filled_at = now() - interval '2 hours'
           where input_key = ${key.inputKey}`,
    );
    expect(await takeCached(db(), { ...key, claimId: "c", ...opts })).toEqual({ kind: "claimed" });
  });
});

describe("a paid answer nobody paid for is not served", () => {
  const opts = { ttlMs: HOUR, staleMs: CLAIM_STALE_MS };
  /** A filled entry paid by a charge key whose ledger entry is `state` (or none). */
  async function paidEntry(state: "reserved" | "charged" | null) {
    const key = await fresh();
    const chargeId = `exe_${key.inputKey}`;
    if (state)
      await db().execute(
        sql`insert into usage (workspace_id, execution_id, source, milli, state)
            values (${key.workspaceId}, ${chargeId}, 'e', 1000, ${state})`,
      );
    expect(await takeCached(db(), { ...key, claimId: "a", ...opts })).toEqual({ kind: "claimed" });
    const paidBy = [{ chargeId, source: "e" }];
    expect(
      await fillCached(db(), { ...key, claimId: "a", outcome: "ok", outputs: { a: 1 }, paidBy }),
    ).toBe("filled");
    return { key, chargeId };
  }

  it("serves it while its charge is reserved (its write pending) and once charged", async () => {
    const { key, chargeId } = await paidEntry("reserved");
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toMatchObject({
      kind: "hit",
      outputs: { a: 1 },
    });
    const fresh = await freshCacheKeys(db(), { ...key, inputKeys: [key.inputKey], ttlMs: HOUR });
    expect([...fresh]).toEqual([key.inputKey]);
    await db().execute(sql`update usage set state = 'charged' where execution_id = ${chargeId}`);
    expect(await takeCached(db(), { ...key, claimId: "c", ...opts })).toMatchObject({
      kind: "hit",
      outputs: { a: 1 },
    });
  });

  it("asks again when the charge was released: nobody paid for the answer", async () => {
    const { key, chargeId } = await paidEntry("reserved");
    await db().execute(sql`delete from usage where execution_id = ${chargeId}`);
    const fresh = await freshCacheKeys(db(), { ...key, inputKeys: [key.inputKey], ttlMs: HOUR });
    expect(fresh.size).toBe(0);
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toEqual({ kind: "claimed" });
    // The new claim's answer replaces it; the old one is not served meanwhile.
    expect(await takeCached(db(), { ...key, claimId: "c", ...opts })).toEqual({ kind: "busy" });
  });

  it("a free answer is served at once, and a pending one whatever its age", async () => {
    const key = await fresh();
    await takeCached(db(), { ...key, claimId: "a", ...opts });
    await fillCached(db(), { ...key, claimId: "a", outcome: "ok", outputs: { a: 1 } });
    expect(await takeCached(db(), { ...key, claimId: "b", ...opts })).toMatchObject({
      kind: "hit",
    });
    const pending = await paidEntry("reserved");
    expect(
      await takeCached(db(), { ...pending.key, claimId: "b", ttlMs: HOUR, staleMs: 0 }),
    ).toMatchObject({ kind: "hit" });
  });

  it("a cell stopped between its answer and its write leaves the answer unpaid: the next cell asks again and is charged", async () => {
    const ws = await newWorkspace();
    await db().execute(sql`update workspaces set plan = 'unlimited' where id = ${ws.id}`);
    // Two rows of one page: the same inputs.
    const tableId = await metaTable(ws.key, { siteUrl: ep.url, rows: 2, distinct: 1 });
    const rows = await queryRows<{ id: string }>(
      db(),
      sql`select id from rows where table_id = ${tableId} order by position`,
    );
    const [first, second] = rows.map((r) => r.id) as [string, string];
    const run = async (rowIds: string[]) =>
      startRun(
        { db: db(), backend: new RecordingBackend() },
        { tableId, groupIds: ["meta"], mode: "all", rowIds, limit: null, window: 10 },
      );
    await run([first]);
    ep.hits.length = 0;
    // The first row's carrier: its answer is in (and kept), then a Stop before the step
    // that writes it.
    let steps = 0;
    const stopBeforeWrite: Pause = async (point, detail) => {
      if (point !== "carrier:step" || detail?.rowId !== first) return;
      steps += 1;
      if (ep.hitsOf("/site").length === 1 && steps > 1)
        await stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId });
    };
    await runCarrier(
      engineDeps({ backend: new RecordingBackend(), pause: stopBeforeWrite, chain: false }),
      { tableId, rowId: first },
      taskContext(),
    );
    expect(ep.hitsOf("/site")).toHaveLength(1);
    expect(await cellCounts(tableId)).toMatchObject({ cancelled: 1 });
    const api = apiClient(ws.key);
    expect(dataOf(await api.GET("/api/usage")).used).toBe(0);
    // The second row, same page: the answer nobody paid for is asked again, and charged.
    await run([second]);
    await runCarrier(
      engineDeps({ backend: new RecordingBackend(), chain: false }),
      { tableId, rowId: second },
      taskContext(),
    );
    expect(ep.hitsOf("/site")).toHaveLength(2);
    const [cell] = await queryRows<{ status: string; cached: boolean | null }>(
      db(),
      sql`select status, (details->>'cached')::boolean as cached from cells where row_id = ${second}`,
    );
    expect(cell).toEqual({ status: "completed", cached: null });
    expect(dataOf(await api.GET("/api/usage")).used).toBe(1);
  });
});

describe("a lookup waits for the one call in flight", () => {
  it("gets the holder's answer once it is kept, and a Stop ends the wait", async () => {
    const key = await fresh();
    const cache = resultCache(db(), key.workspaceId, { ttlMs: HOUR });
    const signal = new AbortController().signal;
    const holder = await cache.lookup("e", key.inputKey, signal);
    expect(holder.kind).toBe("lease");
    let waited: CacheLookup | undefined;
    const waiting = cache.lookup("e", key.inputKey, signal).then((r) => {
      waited = r;
    });
    // Only the holder's answer can end the wait: a waiter that did not wait would have
    // got a lease (or a miss) of its own, not this hit.
    if (holder.kind !== "lease") throw new Error("no lease");
    await holder.keep(answer({ title: "T" }));
    await waiting;
    expect(waited).toMatchObject({ kind: "hit", outcome: "ok", outputs: { title: "T" } });

    const other = await fresh();
    const held = await cache.lookup("e", other.inputKey, signal);
    const stop = new AbortController();
    const stopped = cache.lookup("e", other.inputKey, stop.signal).catch((e: unknown) => e);
    stop.abort(new Error("stopped"));
    expect(await stopped).toEqual(new Error("stopped"));
    if (held.kind === "lease") await held.drop();
  });
});

describe("cells served from the cache", () => {
  it("2,000 rows over 200 distinct pages on two workers: 200 provider calls, 200 credits; the dry run knew", async () => {
    const ws = await newWorkspace();
    await db().execute(sql`update workspaces set plan = 'unlimited' where id = ${ws.id}`);
    const api = apiClient(ws.key);
    // Two workers with pools of their own: the only thing they share is Postgres.
    await useWorker(url, 10);
    await useWorker(url, 10);
    const tableId = await metaTable(ws.key, { siteUrl: ep.url, rows: 2_000, distinct: 200 });
    const estimate = async () =>
      dataOf(
        await api.POST("/api/tables/{id}/runs", {
          params: { path: { id: tableId } },
          body: { mode: "all", dryRun: true },
        }),
      );
    expect(await estimate()).toMatchObject({
      cells: 2_000,
      estimatedCredits: 200,
      groups: [{ groupId: "meta", cells: 2_000, credits: 200, cached: 1_800 }],
    });
    ep.hits.length = 0;
    expect(await runToEnd(ws.key, tableId, { mode: "all" }, 120_000)).toBe("completed");
    expect(await cellCounts(tableId)).toEqual({ completed: 2_000 });
    expect(ep.hitsOf("/site")).toHaveLength(200);
    expect(new Set(ep.hitsOf("/site").map((h) => h.query.get("i"))).size).toBe(200);
    const usage = dataOf(await api.GET("/api/usage"));
    expect(usage.used).toBe(200);
    const [cached] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from cells
           where table_id = ${tableId} and (details->>'cached')::boolean
             and (details->>'costCredits')::int = 0`,
    );
    expect(cached?.n).toBe(1_800);
    // Every answer is fresh now: running it all again would cost nothing.
    expect(await estimate()).toMatchObject({
      estimatedCredits: 0,
      groups: [{ groupId: "meta", cells: 2_000, credits: 0, cached: 2_000 }],
    });
    // The run alone may take up to its own 120 s bound; through the serverless driver on a
    // busy CI machine it took more than the default 30 s once.
  }, 180_000);

  it("a not-found answer is kept; a failed call is not, and the next cell asks again", async () => {
    const ws = await newWorkspace();
    const _api = apiClient(ws.key);
    let fail = true;
    ep.on("/flaky", async () =>
      fail
        ? { status: 500 }
        : { status: 200, body: "<title>x</title>", headers: { "content-type": "text/html" } },
    );
    const notFound = await metaTable(ws.key, {
      siteUrl: ep.url,
      rows: 2,
      path: "/gone",
      distinct: 1,
    });
    const flaky = await metaTable(ws.key, {
      siteUrl: ep.url,
      rows: 1,
      path: "/flaky",
      name: "flaky",
    });
    const runAll = async (tableId: string) =>
      expect(await runToEnd(ws.key, tableId)).toBe("completed");
    ep.hits.length = 0;
    await runAll(notFound);
    expect(ep.hitsOf("/gone")).toHaveLength(1);
    await runAll(flaky);
    expect(await cellCounts(flaky)).toEqual({ error: 1 });
    fail = false;
    await runAll(flaky);
    expect(await cellCounts(flaky)).toEqual({ completed: 1 });
    expect(ep.hitsOf("/flaky")).toHaveLength(2);
  });

  it("the same inputs twice: one call with the cache on, two with a TTL of 0", async () => {
    const ws = await newWorkspace();
    const meta = getEnrichment("website_meta");
    if (!meta) throw new Error("website_meta missing");
    const callsWith = async (cacheTtlMs: number, path: string) => {
      for (const executionId of ["ex_a", "ex_b"]) {
        const gate = paidCalls(
          {
            locks: { db: db() },
            lines: new RateLines(new MemoryLimiter()),
            enrichmentCacheTtlMs: cacheTtlMs,
          },
          {
            workspaceId: ws.id,
            plan: "unlimited",
            tableId: "tbl_x",
            rowId: "row_x",
            groupId: "g",
            executionId: `${executionId}${path}`,
            attempt: 1,
            dispatchId: null,
          },
          () => undefined,
          // No cell holds these calls, so none could reserve: what is tested is the cache.
        )({ source: meta.id, chargeId: `${executionId}${path}`, credits: 0 });
        // Spelled differently each time: the key is the URL as fetched.
        const url = executionId === "ex_a" ? `${ep.url}${path}` : ` ${ep.url}${path}`;
        await runEnrichment(meta, { url }, { signal: new AbortController().signal, ...gate });
      }
      return ep.hitsOf(path).length;
    };
    expect(await callsWith(HOUR, "/on")).toBe(1);
    expect(await callsWith(0, "/off")).toBe(2);
  });
});
