/**
 * A process's metrics flush, in one statement: its series into `metric_series` (a
 * counter's or histogram's growth added to its row, a gauge's reading set), and the
 * expiry of the processes that stopped flushing — their rows deleted, their counters' and
 * histograms' values added to the `gone` row of each series (their gauges dropped).
 *
 * Invariants: a deployment's sum of a counter never goes back — an expiry moves a
 * process's value into `gone` in the statement that deletes it, and a process whose rows
 * were folded flushes only its growth after, into fresh rows; one expiry at a time (an
 * advisory lock, tried: the other flushes skip it), so two flushes never fold the same
 * rows; a process never expires itself. A process is alive while its heartbeat series
 * (`cellflow_processes`, sent by every flush) is younger than the expiry age.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { SeriesValue } from "@/metrics/deltas";
import { METRIC } from "@/metrics/registry";

/** The process id of the row that keeps the counts of expired processes. */
export const GONE_PROCESS = "gone";
/** Arbitrary constant: one expiry at a time across processes. */
const EXPIRY_LOCK_KEY = 7_461_113_034;

export interface FlushResult {
  /** Series rows written for this process. */
  written: number;
  /** Rows of expired processes folded or dropped. */
  expired: number;
}

export async function flushSeries(
  db: Db,
  process: { id: string; kind: string },
  series: readonly SeriesValue[],
  expireAfterMs: number,
): Promise<FlushResult> {
  // Sorted: two statements writing a process's rows take their locks in one order.
  const items = JSON.stringify(
    [...series].sort((a, b) =>
      a.name === b.name ? a.labels.localeCompare(b.labels) : a.name.localeCompare(b.name),
    ),
  );
  const [row] = await queryRows<FlushResult>(
    db,
    sql`with inp as (
          select * from jsonb_to_recordset(${items}::jsonb)
            as x(family text, name text, labels text, kind text, value float8)),
        up as (
          insert into metric_series as m (process_id, process_kind, family, name, labels, kind, value, flushed_at)
          select ${process.id}, ${process.kind}, family, name, labels, kind, value, now() from inp
          on conflict (process_id, name, labels) do update
             set value = case when excluded.kind = 'gauge' then excluded.value else m.value + excluded.value end,
                 kind = excluded.kind, flushed_at = excluded.flushed_at
          returning 1),
        stale as (
          select s.process_id from metric_series s, (select pg_try_advisory_xact_lock(${EXPIRY_LOCK_KEY}) as got) l
           where l.got and s.name = ${METRIC.processes}
             and s.flushed_at < now() - make_interval(secs => ${expireAfterMs / 1000})
             and s.process_id <> ${GONE_PROCESS} and s.process_id <> ${process.id}),
        dropped as (
          delete from metric_series m where m.process_id in (select process_id from stale)
          returning m.family, m.name, m.labels, m.kind, m.value),
        folded as (
          insert into metric_series as m (process_id, process_kind, family, name, labels, kind, value, flushed_at)
          select ${GONE_PROCESS}, ${GONE_PROCESS}, family, name, labels, kind, sum(value), now()
            from dropped where kind <> 'gauge' group by family, name, labels, kind
           order by name, labels
          on conflict (process_id, name, labels) do update
             set value = m.value + excluded.value, flushed_at = excluded.flushed_at
          returning 1)
        select (select count(*) from up)::int as written,
               (select count(*) from dropped)::int + 0 * (select count(*) from folded)::int as expired`,
  );
  return row ?? { written: 0, expired: 0 };
}

/**
 * A process that stops: its rows go now as an expiry would take them (counters and
 * histograms into `gone`, gauges dropped), after its last flush.
 */
export async function retireProcess(db: Db, processId: string): Promise<void> {
  await queryRows(
    db,
    sql`with dropped as (
          delete from metric_series m where m.process_id = ${processId} and m.process_id <> ${GONE_PROCESS}
          returning m.family, m.name, m.labels, m.kind, m.value)
        insert into metric_series as m (process_id, process_kind, family, name, labels, kind, value, flushed_at)
        select ${GONE_PROCESS}, ${GONE_PROCESS}, family, name, labels, kind, sum(value), now()
          from dropped where kind <> 'gauge' group by family, name, labels, kind
         order by name, labels
        on conflict (process_id, name, labels) do update
           set value = m.value + excluded.value, flushed_at = excluded.flushed_at`,
  );
}
