import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { newId } from "@/domain/ids";
import type { Plan } from "@/domain/statuses";
import { appendEvent } from "../events/append";
import { tableFill } from "../tables/read";
import type { RowRecord } from "./read";
import { rowsEventOf } from "./rows-event";

/** Rows per table for each plan (null: no cap), as the plans and the deployment set them. */
export type RowCaps = Readonly<Record<Plan, number | null>>;

export type InsertOutcome =
  | { kind: "inserted"; rows: RowRecord[] }
  /** The table does not exist (deleted meanwhile). */
  | { kind: "gone" }
  /** The rows would take the table past its plan's cap: nothing was written. */
  | { kind: "over_cap"; plan: Plan; cap: number; rowCount: number };

/**
 * Inserts rows at the end of the table in one statement. Positions come from the table's
 * counter, bumped in the same statement, so concurrent inserts never share a position;
 * that statement also moves the table's `row_count` and holds it under the cap of the
 * workspace's plan (read in the statement, so a plan change counts from the next insert).
 * Its row lock serialises concurrent inserts on the table, and the second re-checks the
 * cap on the count the first committed: together they can never pass it. One `rows`
 * event names the rows, or counts them past ROW_EVENT_IDS_UP_TO (`rows-event.ts`).
 */
export async function insertRowsUnderCap(
  db: Db,
  tableId: string,
  data: Record<string, unknown>[],
  caps: RowCaps,
): Promise<InsertOutcome> {
  // A null value means "empty": it is simply not stored.
  const items = data.map((d) => ({
    id: newId("row"),
    data: Object.fromEntries(Object.entries(d).filter(([, v]) => v !== null)),
  }));
  const n = items.length;
  if (n === 0) return { kind: "inserted", rows: [] };
  return db.transaction(async (tx): Promise<InsertOutcome> => {
    for (let attempt = 1; ; attempt++) {
      const rows = await appendAtEnd(tx, tableId, items, caps);
      if (rows.length > 0) {
        rows.sort((a, b) => a.position - b.position);
        const ids = rows.map((r) => r.id);
        await appendEvent(tx, tableId, "rows", rowsEventOf("insert", ids));
        return { kind: "inserted", rows };
      }
      const why = await refusal(tx, tableId, n, caps);
      // A delete (or a plan change) between the guard and this read made room: the guard
      // is asked again rather than answering a refusal the table no longer warrants.
      if (why.kind !== "room" || attempt === INSERT_ATTEMPTS)
        return why.kind === "room" ? why.over : why;
    }
  });
}

const INSERT_ATTEMPTS = 3;

const NO_CAPS: RowCaps = { free: null, pro: null, unlimited: null };

/**
 * `insertRowsUnderCap` with no cap, for what builds tables outside the API (benchmarks,
 * chaos, tests); the row count still moves. Null when the table does not exist.
 */
export async function insertRows(
  db: Db,
  tableId: string,
  data: Record<string, unknown>[],
): Promise<RowRecord[] | null> {
  const out = await insertRowsUnderCap(db, tableId, data, NO_CAPS);
  return out.kind === "inserted" ? out.rows : null;
}

async function appendAtEnd(
  tx: Db,
  tableId: string,
  items: { id: string; data: Record<string, unknown> }[],
  caps: RowCaps,
): Promise<RowRecord[]> {
  const n = items.length;
  const cap = capOf(sql`w.plan`, caps);
  return queryRows<RowRecord>(
    tx,
    sql`
      with pos as (
        update tables t
           set next_position = t.next_position + ${n}, row_count = t.row_count + ${n}
          from workspaces w
         where t.id = ${tableId} and w.id = t.workspace_id
           and (${cap} is null or t.row_count + ${n} <= ${cap})
        returning t.next_position - ${n} as start
      )
      insert into rows (id, table_id, position, data)
      select x.value->>'id', ${tableId}, pos.start + x.ord - 1, x.value->'data'
        from pos, jsonb_array_elements(${JSON.stringify(items)}::jsonb) with ordinality as x(value, ord)
      returning id, position, data,
        to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
        to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt",
        '{}'::jsonb as cells`,
  );
}

/** The cap of the plan `plan` (an SQL expression) names, as a bigint (null: none). */
function capOf(plan: SQL, caps: RowCaps): SQL {
  return sql`(case ${plan} when 'free' then ${caps.free}::bigint
                           when 'pro' then ${caps.pro}::bigint
                           else ${caps.unlimited}::bigint end)`;
}

/**
 * Why the guarded update matched nothing: the table is gone, or it is over its cap; or,
 * read after the guard, there is room again (`over` is what to answer if that persists).
 */
async function refusal(
  db: Db,
  tableId: string,
  n: number,
  caps: RowCaps,
): Promise<
  | { kind: "gone" }
  | Extract<InsertOutcome, { kind: "over_cap" }>
  | { kind: "room"; over: Extract<InsertOutcome, { kind: "over_cap" }> }
> {
  const table = await tableFill(db, tableId);
  if (!table) return { kind: "gone" };
  const cap = caps[table.plan];
  const over = {
    kind: "over_cap" as const,
    plan: table.plan,
    cap: cap ?? 0,
    rowCount: table.rowCount,
  };
  return cap === null || table.rowCount + n <= cap ? { kind: "room", over } : over;
}
