/**
 * A stamping page is a named statement, parsed and planned once per connection and shape,
 * except with a `where`: the compiled filter is part of its text, so each filter would be
 * a statement of its own, kept by every connection for its life.
 */

import { type Db, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { TypedCondition } from "@/domain/where";
import { createDispatch } from "@/store/dispatches/create";
import { stampNextPage } from "@/store/dispatches/stamp-next";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

/** The page statements this connection keeps named. */
async function namedPages(tx: Db): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    tx,
    sql`select count(*)::int as n from pg_prepared_statements where statement like '%page_rows as (%'`,
  );
  return r?.n ?? 0;
}

describe("stamping pages as named statements", () => {
  it("a page without a where is named; one with a where is not", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 4, waitOnly: true })).id;
    const run = (where: TypedCondition[] | null) =>
      createDispatch(db(), {
        tableId,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        rowLimit: null,
        window: 5,
        ...(where ? { where } : {}),
      });
    const plain = await run(null);
    const filtered = await run([{ column: "c0", type: "json", op: "empty" }]);
    // One connection for all of it: what it keeps named is its own.
    await db().transaction(async (tx) => {
      const before = await namedPages(tx);
      expect((await stampNextPage(tx, filtered, 10)).cells).toBe(4);
      expect(await namedPages(tx)).toBe(before);
      expect((await stampNextPage(tx, plain, 10)).cells).toBe(4);
      expect(await namedPages(tx)).toBe(before + 1);
      // The same shape again: the same statement.
      expect((await stampNextPage(tx, await run(null), 10)).cells).toBe(4);
      expect(await namedPages(tx)).toBe(before + 1);
    });
  });
});
