/**
 * Read-only: one page of the input values of a group's cells that a run of this scope
 * would stamp now (the dry-run estimate asks the enrichment cache about them). Rows and
 * cells are chosen with the conditions `stampPage` stamps with and `countScope` counts
 * with; pages follow row positions, and the scope's `limit` (its first rows with
 * something to stamp) holds across pages. With the group's run conditions, only the cells
 * on rows where they hold (the others call nothing).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { TypedCondition } from "@/domain/where";
import { whereSql } from "../rows/where-sql";
import { textArray } from "../sql";
import { eligible, type StampScope, scopedRows, scopeOf } from "./stamp";

export interface ScopeInputsPage {
  /** Each counted cell's row data, only the columns asked for. */
  rows: Record<string, unknown>[];
  /** Where the next page starts, or null when no row in scope is left. */
  after: number | null;
  /** Rows of the scope this page went through (for the limit). */
  scanned: number;
}

export async function scopeInputs(
  db: Db,
  scope: StampScope,
  page: {
    groupId: string;
    columns: readonly string[];
    afterPosition: number;
    maxRows: number;
    runIf?: readonly TypedCondition[];
  },
): Promise<ScopeInputsPage> {
  const { guards, ...groups } = scopeOf(scope);
  const [result] = await queryRows<{
    rows: Record<string, unknown>[];
    last: number | null;
    scanned: number;
  }>(
    db,
    sql`with scoped_rows as (
          ${scopedRows(scope, { afterPosition: page.afterPosition, limit: page.maxRows })}
        ),
        counted as (
          select p.position,
                 (select coalesce(jsonb_object_agg(k, p.data->k), '{}'::jsonb)
                    from unnest(${textArray(page.columns)}) as k) as data
            from scoped_rows p
           cross join lateral (select p.row_id as id, p.data) as r
           cross join ${groups.from}
            left join cells c on c.row_id = p.row_id and c.group_id = g.group_id
           where g.group_id = ${page.groupId} and ${eligible(scope)} and ${guards}
             and ${whereSql(page.runIf ?? [])}
        )
        select coalesce((select jsonb_agg(data order by position) from counted), '[]'::jsonb) as rows,
               (select max(position) from scoped_rows)::float8 as last,
               (select count(*) from scoped_rows)::int as scanned`,
  );
  const scanned = result?.scanned ?? 0;
  return {
    rows: result?.rows ?? [],
    after: scanned < page.maxRows ? null : (result?.last ?? null),
    scanned,
  };
}
