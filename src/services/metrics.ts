/**
 * `GET /api/metrics`: the deployment's series, summed over its processes (what each
 * flushed into Postgres), plus the cells by status and the queue depth off the progress
 * counters, as Prometheus text.
 */
import type { Db } from "@db/client";
import { CELL_STATUSES } from "@/domain/statuses";
import { EXPIRE_AFTER_MS } from "@/metrics/flush-loop";
import { processMetrics } from "@/metrics/instance";
import { renderMetrics } from "@/metrics/render";
import { readDeploymentMetrics } from "@/store/metrics/read";

export async function scrapeMetrics(db: Db): Promise<string> {
  const { series, cells } = await readDeploymentMetrics(db, EXPIRE_AFTER_MS);
  // Every status, 0 where none: a series that appears and vanishes breaks rate() and alerts.
  const byStatus = Object.fromEntries(CELL_STATUSES.map((s) => [s, cells.byStatus[s] ?? 0]));
  // The help and types of the families this code registers, the Node ones included.
  return renderMetrics(processMetrics(), series, { byStatus });
}
