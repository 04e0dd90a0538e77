/**
 * How many of a paid enrichment group's cells in a run's scope the workspace's result
 * cache would serve: those whose inputs have a fresh answer now, and those repeating
 * inputs an earlier cell of the run asks the providers for (concurrent misses of one key
 * make one call). What the estimate subtracts; read-only. Cells whose inputs are missing
 * or invalid are not counted as served (they are charged nothing anyway, and the
 * estimate errs towards paying). Cells whose run condition does not hold are not counted
 * either: the estimate counts them apart (`skippedByCondition`).
 */
import type { EnrichmentGroup } from "@/contracts/table";
import { groupInputs } from "@/domain/table-schema";
import type { TypedCondition } from "@/domain/where";
import { cacheKeyOf } from "@/enrichments/cache-key";
import { readInputs } from "@/enrichments/run";
import type { Enrichment } from "@/enrichments/types";
import { scopeInputs } from "@/store/cells/scope-inputs";
import type { StampScope } from "@/store/cells/stamp";
import { freshCacheKeys } from "@/store/enrichment-cache/fresh-keys";
import type { ServiceContext } from "./context";

/** Rows per page: one statement each for the inputs and for the cache. */
const PAGE_ROWS = 2_000;

export async function cacheServedCells(
  ctx: ServiceContext,
  scope: StampScope & { limit: number | null },
  group: EnrichmentGroup,
  enrichment: Enrichment,
  ttlMs: number,
  runIf: readonly TypedCondition[],
): Promise<number> {
  const columns = [...new Set(Object.values(group.inputs))];
  const asked = new Set<string>();
  let served = 0;
  let scanned = 0;
  for (let after = -1; ; ) {
    const maxRows = scope.limit === null ? PAGE_ROWS : Math.min(PAGE_ROWS, scope.limit - scanned);
    if (maxRows <= 0) break;
    const page = await scopeInputs(ctx.db, scope, {
      groupId: group.id,
      columns,
      afterPosition: after,
      maxRows,
      runIf,
    });
    const keys: string[] = [];
    for (const data of page.rows) {
      const read = readInputs(enrichment, groupInputs(group, data));
      if (read.kind === "ok") keys.push(cacheKeyOf(enrichment, read.inputs));
    }
    const fresh = await freshCacheKeys(ctx.db, {
      workspaceId: ctx.workspaceId,
      enrichmentId: enrichment.id,
      inputKeys: [...new Set(keys)].filter((k) => !asked.has(k)),
      ttlMs,
    });
    for (const key of keys) {
      if (fresh.has(key) || asked.has(key)) served += 1;
      else asked.add(key);
    }
    scanned += page.scanned;
    if (page.after === null) break;
    after = page.after;
  }
  return served;
}
