/**
 * `GET /api/system` (API.md "Limits, metrics, system"), through the route on real
 * Postgres with an in-process worker: a run in progress shows with its cells done of its
 * total, a rate and an ETA, and leaves the list when it ends; the newest 20 cell errors
 * come newest first with their table, row and group ids and a link to the cell; another
 * workspace's runs and errors never show; no key is a 401.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { runToEnd, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable, workflowTable } from "../helpers/tables";

type SystemView = Schemas["SystemView"];

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 2);
}, 60_000);

const system = async (key: string): Promise<SystemView> =>
  dataOf(await apiClient(key).GET("/api/system"));

/** A table whose one group fails on every row. */
async function failingTable(key: string, rows: number): Promise<string> {
  const { tableId } = await workflowTable(key, {
    workflow: { blocks: [{ id: "boom", type: "fail", message: "boom" }] },
    outputs: { out: "boom" },
    columns: [{ id: "n", name: "N", type: "number" }],
    rows: Array.from({ length: rows }, (_, n) => ({ n })),
  });
  return tableId;
}

describe("GET /api/system", () => {
  it("no key, or a wrong one: 401", async () => {
    const none = await apiClient(null).GET("/api/system");
    expect(none.response.status).toBe(401);
    expect(none.error).toMatchObject({ error: { code: "unauthorized" } });
    expect((await apiClient("not-a-key").GET("/api/system")).response.status).toBe(401);
  });

  it("a run in progress shows its cells done of its total, a rate and an ETA, then leaves the list", async () => {
    const ws = await newWorkspace("system-run");
    const other = await newWorkspace("system-other");
    const rows = 10;
    const table = await waitTable(ws.key, { groups: 1, ms: 600, rows });
    const run = startedRun(
      await apiClient(ws.key).POST("/api/tables/{id}/runs", {
        params: { path: { id: table.id } },
        body: { mode: "all" },
      }),
    );
    const seen: SystemView[] = [];
    const midway = await waitFor(
      async () => {
        const v = await system(ws.key);
        seen.push(v);
        const r = v.runs.find((x) => x.id === run.dispatchId);
        return r !== undefined && r.done > 0 && r.done < r.total;
      },
      60_000,
      100,
    );
    expect(midway).toBe(true);
    const view = seen.at(-1);
    const r = view?.runs.find((x) => x.id === run.dispatchId);
    expect(r).toMatchObject({
      tableId: table.id,
      tableName: "engine",
      groupIds: ["g0"],
      total: rows,
    });
    if (!r || !view) return;
    expect(r.cellsPerSecond).toBeGreaterThan(0);
    expect(r.etaSeconds).not.toBeNull();
    expect(r.etaSeconds).toBeGreaterThan(0);
    expect(r.done + r.queued + r.running + r.paused).toBe(r.total);
    // The worker carries two rows at a time: the workspace's running cells are its carriers.
    expect(seen.some((v) => v.carriersRunning > 0 && v.queueDepth > 0)).toBe(true);
    expect(view.carriersRunning).toBeLessThanOrEqual(2);
    // Other workspaces exist here: the deployment-wide figures (their calls and volumes
    // too) are withheld from a workspace key.
    expect(view.stampToRunning).toEqual({
      scope: "withheld",
      claims: 0,
      p50Seconds: null,
      p99Seconds: null,
    });
    expect(view.providers).toEqual({ scope: "withheld", list: [] });
    // Another workspace sees none of it.
    const theirs = await system(other.key);
    expect(theirs.runs).toEqual([]);
    expect(theirs.queueDepth).toBe(0);
    expect(theirs.carriersRunning).toBe(0);

    expect(await waitForDispatch(ws.key, table.id, run.dispatchId)).toBe("completed");
    const after = await system(ws.key);
    expect(after.runs).toEqual([]);
    expect(after.queueDepth).toBe(0);
    expect(after.carriersRunning).toBe(0);
  });

  it("lists the 20 newest cell errors newest first, with their ids and a link, and only the workspace's", async () => {
    const ws = await newWorkspace("system-errors");
    const other = await newWorkspace("system-errors-other");
    const first = await failingTable(ws.key, 15);
    expect(await runToEnd(ws.key, first)).toBe("completed");
    const second = await failingTable(ws.key, 10);
    expect(await runToEnd(ws.key, second)).toBe("completed");
    const theirs = await failingTable(other.key, 3);
    expect(await runToEnd(other.key, theirs)).toBe("completed");

    const { errors } = await system(ws.key);
    expect(errors).toHaveLength(20);
    // Newest first: the second table's ten (run last), then the first table's newest.
    expect(errors.slice(0, 10).every((e) => e.tableId === second)).toBe(true);
    expect(errors.slice(10).every((e) => e.tableId === first)).toBe(true);
    const times = errors.map((e) => Date.parse(e.finishedAt ?? ""));
    expect(times.every((t, i) => i === 0 || t <= (times[i - 1] ?? t))).toBe(true);
    // Each is a cell in error with that message, as the database has it.
    const cells = await queryRows<{
      rowId: string;
      groupId: string;
      error: string;
      tableId: string;
    }>(
      getDatabase().db,
      sql`select row_id as "rowId", group_id as "groupId", error, table_id as "tableId"
            from cells where status = 'error' and table_id in (${first}, ${second})`,
    );
    const byKey = new Map(cells.map((c) => [`${c.rowId}/${c.groupId}`, c]));
    for (const e of errors) {
      const cell = byKey.get(`${e.rowId}/${e.groupId}`);
      expect(cell).toMatchObject({ tableId: e.tableId, error: e.error });
      expect(e.error).toMatch(/boom$/);
      expect(e.groupId).toBe("g");
      expect(e.groupName).toBe("G");
      expect(e.link).toBe(`/tables/${e.tableId}?row=${e.rowId}&group=g`);
    }
    // The five left out are the first table's oldest.
    const listed = new Set(errors.map((e) => e.rowId));
    const left = cells.filter((c) => !listed.has(c.rowId));
    expect(left).toHaveLength(5);
    expect(left.every((c) => c.tableId === first)).toBe(true);

    const otherErrors = (await system(other.key)).errors;
    expect(otherErrors).toHaveLength(3);
    expect(otherErrors.every((e) => e.tableId === theirs)).toBe(true);
  });
});
