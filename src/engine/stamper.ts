/**
 * The background half of a large run: stamps the remaining pages, sliding the window after
 * each so carriers start on rows as soon as they are stamped, and finishes by letting the
 * window complete the dispatch. Safe to run twice (the dispatch row is locked per page and
 * the resume cursor moves with each page's commit).
 */
import { type StampPayload, stamperSpec, type TaskContext } from "@/backends/port";
import { stampNextPage } from "@/store/dispatches/stamp-next";
import { STAMP_PAGE_ROWS, slideWindows } from "./dispatcher";
import type { Engine } from "./handle";
import { at, type Pause } from "./race-points";

export async function runStamper(
  engine: Pick<Engine, "database" | "backend">,
  payload: StampPayload,
  ctx: TaskContext,
  opts: { pageRows?: number; pause?: Pause } = {},
): Promise<number> {
  const { db } = engine.database;
  const { backend } = engine;
  let cells = 0;
  for (;;) {
    await at(opts.pause, "run:page", { dispatchId: payload.dispatchId });
    const page = await stampNextPage(db, payload.dispatchId, opts.pageRows ?? STAMP_PAGE_ROWS);
    cells += page.cells;
    // Its own window first (carriers start on the rows just stamped), then the runs it displaced.
    await slideWindows(
      { db, backend },
      { tableId: payload.tableId, dispatchIds: [payload.dispatchId, ...page.displaced] },
    );
    if (!page.more) return cells;
    if (ctx.signal.aborted) {
      // Shutting down mid-way: the next worker resumes from the stored cursor.
      await backend.enqueue([{ ...stamperSpec(payload), delayMs: 1_000 }]);
      return cells;
    }
  }
}
