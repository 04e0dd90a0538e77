/**
 * A table's progress off its counters: the folded base plus the deltas not folded yet,
 * read in one statement (one snapshot), so a fold moving deltas into the base at the same
 * moment is seen either before or after, never half. Its cost follows the number of
 * groups and of unfolded deltas, not of rows or cells: no count(*) over the table.
 * Invariant: equal to a full count of the table's committed cells and rows.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { outcomeField, type TableProgress } from "@/contracts/progress";
import { CELL_OUTCOMES, CELL_STATUSES } from "@/domain/statuses";

/**
 * One column per status and per outcome of the tuples, with its field in the body and
 * what it counts; literals built from constants, never input.
 */
const COLUMNS = [
  ...CELL_STATUSES.map((s) => ({ column: s, field: s, where: `c.status = '${s}'` })),
  ...CELL_OUTCOMES.map((o) => ({
    column: `o_${o}`,
    field: outcomeField(o),
    where: `c.status = 'completed' and c.outcome = '${o}'`,
  })),
];

const sums = sql.raw(
  COLUMNS.map((c) => `coalesce(sum(c.n) filter (where ${c.where}), 0) as "${c.column}"`).join(
    ",\n",
  ),
);

const body = sql.raw(
  `jsonb_build_object('groupId', p.group_id, ${COLUMNS.map((c) => `'${c.field}', p."${c.column}"`).join(", ")},
                      'neverRun', greatest(r.n - p.total, 0))`,
);

/** The table's counts per (group, status, outcome): base + unfolded deltas. */
function countsOf(tableId: string): SQL {
  return sql`select group_id, status, outcome, sum(n) as n from (
               select group_id, status, outcome, n from cell_counts where table_id = ${tableId}
               union all
               select group_id, status, outcome, n from cell_count_deltas
                where table_id = ${tableId} and group_id is not null
             ) x group by 1, 2, 3`;
}

/** The progress body of the table, if it is the workspace's (null: no such table). */
export async function readProgress(
  db: Db,
  scope: { workspaceId?: string; tableId: string },
): Promise<TableProgress | null> {
  const { tableId, workspaceId } = scope;
  const owned = workspaceId === undefined ? sql`true` : sql`t.workspace_id = ${workspaceId}`;
  const [row] = await queryRows<TableProgress>(
    db,
    sql`with t as (select id, schema from tables t where t.id = ${tableId} and ${owned}),
        g as (
          select e.value->>'id' as group_id, e.ord
            from t, jsonb_array_elements(t.schema->'groups') with ordinality as e(value, ord)
        ),
        c as (${countsOf(tableId)}),
        r as (
          select (coalesce((select rows from table_counts where table_id = ${tableId}), 0)
                  + coalesce((select sum(n) from cell_count_deltas
                               where table_id = ${tableId} and group_id is null), 0))::bigint as n
        ),
        p as (
          select g.group_id, g.ord, ${sums}, coalesce(sum(c.n), 0) as total
            from g left join c on c.group_id = g.group_id
           group by g.group_id, g.ord
        )
        select r.n::float8 as rows,
               (select coalesce(jsonb_agg(${body} order by p.ord), '[]'::jsonb) from p) as groups
          from t, r`,
  );
  return row ?? null;
}
