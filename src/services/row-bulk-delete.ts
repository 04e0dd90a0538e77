/**
 * `POST /api/tables/:id/rows/delete`: the way out of a full table. Each batch is deleted
 * as the single-row DELETE deletes (store/rows/delete-batch.ts): cells go with their rows,
 * so no worker can write into them afterwards, attempts still running are stopped at once
 * (here and in every other process), and the table's row count moves in the batch's
 * transaction. Not atomic across batches: a `where` over many rows is deleted
 * `BATCH_ROWS` at a time, each batch committed on its own (no huge transaction holding
 * locks); a request that fails midway keeps the batches already committed, and a retry
 * deletes the rest.
 */
import type { DeletedRows, DeleteRowsRequest } from "@/contracts/rows";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { checkWhere } from "@/domain/where";
import { abortLocal, publishCancel } from "@/engine/cancellation";
import { deleteRowBatch, type RowPick } from "@/store/rows/delete-batch";
import type { ServiceContext } from "./context";
import { tableSchema } from "./table-schema";

const BATCH_ROWS = 5_000;

export async function deleteRows(
  ctx: ServiceContext,
  tableId: string,
  req: DeleteRowsRequest,
): Promise<Result<DeletedRows, Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  let picks: RowPick[];
  if ("rowIds" in req) {
    const ids = [...new Set(req.rowIds)];
    picks = [];
    for (let i = 0; i < ids.length; i += BATCH_ROWS)
      picks.push({ rowIds: ids.slice(i, i + BATCH_ROWS) });
  } else if ("where" in req) {
    const where = checkWhere(schema, req.where);
    if (!where.ok) return where;
    picks = [{ where: where.value }];
  } else {
    // `all: true`: no condition, every row (batch by batch, like a `where`).
    picks = [{ where: [] }];
  }
  let deleted = 0;
  for (const pick of picks) {
    // A `where` is asked again until a batch comes back short: each batch takes the next
    // matching rows still there.
    for (;;) {
      const batch = await deleteRowBatch(ctx.db, { tableId, pick, limit: BATCH_ROWS });
      deleted += batch.rowIds.length;
      // Their cells went with them; attempts still running stop now rather than at their next write.
      abortLocal(batch.running);
      await publishCancel(ctx.db, batch.running);
      if ("rowIds" in pick || batch.rowIds.length < BATCH_ROWS) break;
    }
  }
  ctx.log.info({ tableId, deleted }, "rows deleted");
  return { ok: true, value: { deleted } };
}
