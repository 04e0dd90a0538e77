/**
 * What `GET /api/metrics` reads, in one snapshot: every series summed over the processes
 * (a counter or histogram over every row, the `gone` one of the processes that expired
 * included, so a process that stopped flushing counts until its expiry folds it, and
 * after; a gauge only over the processes alive, with its max, min and average for the
 * families that aggregate so), and the cells
 * of the whole deployment by status, off the progress counters — the folded base plus the
 * deltas not folded yet, as store/progress/read.ts reads one table's. Its cost follows the
 * number of processes, series, tables' groups and unfolded deltas, never the cells: no
 * count(*) over `cells`.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { METRIC } from "@/metrics/registry";
import type { CellTotals, SummedSeries } from "@/metrics/render";
import { GONE_PROCESS } from "./flush";

export async function readDeploymentMetrics(
  db: Db,
  expireAfterMs: number,
): Promise<{ series: SummedSeries[]; cells: CellTotals }> {
  const [row] = await queryRows<{
    series: SummedSeries[] | null;
    cells: Record<string, number> | null;
  }>(
    db,
    sql`with live as (
          select family, name, labels, kind, value from metric_series m
           where m.kind <> 'gauge'
              or m.process_id in (select process_id from metric_series h
                                   where h.name = ${METRIC.processes}
                                     and h.flushed_at >= now() - make_interval(secs => ${expireAfterMs / 1000})
                                     and h.process_id <> ${GONE_PROCESS})),
        s as (
          select family, name, labels, min(kind) as kind, sum(value) as sum, max(value) as max,
                 min(value) as min, avg(value) as avg
            from live group by family, name, labels),
        c as (
          select status::text as status, sum(n)::float8 as n from (
            select status, n from cell_counts
            union all
            select d.status, d.n from cell_count_deltas d
             where d.group_id is not null and exists (select 1 from tables t where t.id = d.table_id)
          ) x group by 1)
        select (select jsonb_agg(jsonb_build_object('family', family, 'name', name, 'labels', labels,
                                                     'kind', kind, 'sum', sum, 'max', max, 'min', min, 'avg', avg)
                                 order by family, name, labels) from s) as series,
               (select jsonb_object_agg(status, n) from c) as cells`,
  );
  return { series: row?.series ?? [], cells: { byStatus: row?.cells ?? {} } };
}

/** A counter's or histogram's series summed over every process (the `gone` row included). */
export interface CountedSeries {
  name: string;
  /** The labels as JSON, keys sorted. */
  labels: string;
  value: number;
}

/**
 * The counter and histogram series of `families`, each summed over the processes, as
 * `GET /api/metrics` sums them (System page: the claims' histogram, the provider calls and
 * the limiter's waits). Its cost follows the processes and those families' series.
 */
export function readCountedSeries(db: Db, families: readonly string[]): Promise<CountedSeries[]> {
  return queryRows<CountedSeries>(
    db,
    sql`select name, labels, sum(value)::float8 as value from metric_series
         where kind <> 'gauge'
           and family in (select jsonb_array_elements_text(${JSON.stringify(families)}::jsonb))
         group by name, labels
         order by name, labels`,
  );
}
