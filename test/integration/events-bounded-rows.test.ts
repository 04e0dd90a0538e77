/**
 * `rows` events stay bounded (issue 33): an insert or delete of more than
 * ROW_EVENT_IDS_UP_TO rows in one statement writes one `rows` event with their count and
 * no id (an import of 2,000 rows: one event of a few bytes, not one listing 2,000 ids);
 * a small insert or delete still lists its ids. Every event fits the stream's contract.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { ROW_EVENT_IDS_UP_TO } from "@/contracts/events";
import { apiClient, dataOf, inProcessFetch } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { eventContractBreach } from "../helpers/event-contract";
import { newWorkspace } from "../helpers/fixtures";

const db = () => getDatabase().db;
let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
});

interface RowsEvent {
  op: string;
  rowIds: string[];
  count?: number;
  bulk?: true;
}

async function rowsEvents(tableId: string): Promise<RowsEvent[]> {
  const events = await queryRows<{ data: RowsEvent }>(
    db(),
    sql`select data from events where table_id = ${tableId} and kind = 'rows' order by id`,
  );
  for (const e of events) expect(eventContractBreach("rows", e.data)).toBeNull();
  return events.map((e) => e.data);
}

async function newTable(): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "bounded rows",
      columns: [
        { id: "name", name: "name", type: "text" },
        { id: "n", name: "n", type: "number" },
      ],
    },
  });
  return dataOf(t).id;
}

async function importCsv(tableId: string, n: number) {
  const text = ["name,n", ...Array.from({ length: n }, (_, i) => `c${i},${i}`)].join("\n");
  const res = await inProcessFetch(
    new Request(`http://cellflow.test/api/tables/${tableId}/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "text/csv" },
      body: text,
    }),
  );
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(body).toEqual({ inserted: n });
}

const rowCount = async (tableId: string) =>
  dataOf(await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: tableId } } }))
    .rowCount;

describe("rows events of bulk inserts and deletes", () => {
  it("an import of 2,000 rows writes one event with the count and no id", async () => {
    const t = await newTable();
    await importCsv(t, 2_000);
    expect(await rowsEvents(t)).toEqual([{ op: "insert", rowIds: [], count: 2_000, bulk: true }]);
  });

  it("a small insert and a small delete still list their ids", async () => {
    const t = await newTable();
    const api = apiClient(key);
    const inserted = dataOf(
      await api.POST("/api/tables/{id}/rows", {
        params: { path: { id: t } },
        body: { rows: [{ data: { n: 1 } }, { data: { n: 2 } }, { data: { n: 3 } }] },
      }),
    ).rows.map((r) => r.id);
    const gone = inserted.slice(0, 2);
    const deleted = dataOf(
      await api.POST("/api/tables/{id}/rows/delete", {
        params: { path: { id: t } },
        body: { rowIds: gone },
      }),
    );
    expect(deleted.deleted).toBe(2);
    const [ins, del, ...more] = await rowsEvents(t);
    expect(ins).toEqual({ op: "insert", rowIds: inserted });
    expect(del?.op).toBe("delete");
    expect(del?.rowIds.toSorted()).toEqual(gone.toSorted());
    expect(del?.bulk).toBeUndefined();
    expect(more).toEqual([]);
  });

  it("a bulk delete by where writes one counted event per batch, and the rows are gone", async () => {
    const t = await newTable();
    await importCsv(t, 2_000);
    // n < 1,200: 1,200 rows in one batch (5,000 per transaction).
    const deleted = dataOf(
      await apiClient(key).POST("/api/tables/{id}/rows/delete", {
        params: { path: { id: t } },
        body: { where: [{ column: "n", op: "lt", value: 1_200 }] },
      }),
    );
    expect(deleted.deleted).toBe(1_200);
    expect(await rowCount(t)).toBe(800);
    const events = await rowsEvents(t);
    expect(events.at(-1)).toEqual({ op: "delete", rowIds: [], count: 1_200, bulk: true });
    expect(events.every((e) => e.rowIds.length <= ROW_EVENT_IDS_UP_TO)).toBe(true);
  });

  it("a bulk delete of all rows (all: true) empties the table; an empty where is refused", async () => {
    const t = await newTable();
    await importCsv(t, 700);
    const api = apiClient(key);
    const path = { params: { path: { id: t } } };
    const empty = await api.POST("/api/tables/{id}/rows/delete", { ...path, body: { where: [] } });
    expect(empty.response.status).toBe(400);
    expect(await rowCount(t)).toBe(700);
    const all = dataOf(
      await api.POST("/api/tables/{id}/rows/delete", { ...path, body: { all: true } }),
    );
    expect(all.deleted).toBe(700);
    expect(await rowCount(t)).toBe(0);
    expect((await rowsEvents(t)).at(-1)).toEqual({
      op: "delete",
      rowIds: [],
      count: 700,
      bulk: true,
    });
  });
});
