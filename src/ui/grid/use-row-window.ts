"use client";
/**
 * The reads that keep the grid's window (`model.ts`) on the rows on screen: one page at a
 * time, the one `row-window.ts` names, until the window holds them; and the window's pages
 * read again for a bulk change. A page read for a window that a newer read or jump
 * replaced is dropped (`readCount`, `windowCount`).
 */
import { type RefObject, useCallback, useRef } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api } from "../api";
import type { GridRows } from "./model";
import { ROWS_PAGE, type RowQuery, rowsPageQuery } from "./row-query";
import { MAX_PAGES, windowRead } from "./row-window";

export type PageQuery = ReturnType<typeof rowsPageQuery>;

/** The rows on screen, as indexes among all the rows that match. */
export interface RowRange {
  first: number;
  last: number;
}

export function useRowWindow(o: {
  tableId: string;
  rows: GridRows<PageQuery>;
  bump: () => void;
  queryRef: RefObject<RowQuery>;
  /** Each full read of the rows. */
  readCount: RefObject<number>;
  /** Each new window (a full read or a jump). */
  windowCount: RefObject<number>;
}) {
  const { tableId, rows, bump, queryRef, readCount, windowCount } = o;
  const wanted = useRef<RowRange>({ first: 0, last: 0 });
  const reading = useRef(false);

  const readPage = useCallback(
    async (q: PageQuery): Promise<Schemas["RowPage"]> =>
      answer(api.GET("/api/tables/{id}/rows", { params: { path: { id: tableId }, query: q } })),
    [tableId],
  );

  /** Reads pages until the window holds the rows on screen (one read at a time). */
  const fill = useCallback(async () => {
    if (reading.current) return;
    reading.current = true;
    try {
      for (;;) {
        const read = readCount.current;
        const win = windowCount.current;
        if (rows.pageCount === 0) return;
        const next = windowRead(
          {
            start: rows.start,
            held: rows.list().length,
            total: rows.total,
            atStart: rows.atStart,
            atEnd: rows.atEnd,
            prevCursor: rows.prevCursor,
            nextCursor: rows.nextCursor,
          },
          wanted.current,
          ROWS_PAGE,
        );
        if (!next) return;
        const q = rowsPageQuery(queryRef.current, next.place, ROWS_PAGE);
        const page = await readPage(q);
        if (read !== readCount.current || win !== windowCount.current) continue;
        if (next.kind === "jump") {
          windowCount.current++;
          rows.reset(page, q, { start: next.start, total: rows.total });
        } else {
          rows.addPage(page, q, next.side);
          if (rows.pageCount > MAX_PAGES) rows.dropPage(next.side === "end" ? "start" : "end");
        }
        bump();
      }
    } catch {
      // The next scroll asks again; a failed full read says why (`rowsError`).
    } finally {
      reading.current = false;
    }
  }, [rows, bump, readPage, queryRef, readCount, windowCount]);

  /** The grid's rows on screen moved: read what the window lacks. */
  const show = useCallback(
    (range: RowRange) => {
      wanted.current = range;
      void fill();
    },
    [fill],
  );

  /** Reads the window's pages again, merged into the rows shown (none added, none reset). */
  const reread = useCallback(async () => {
    const read = readCount.current;
    const win = windowCount.current;
    for (const q of rows.pageQueries()) {
      const page = await readPage(q);
      if (read !== readCount.current || win !== windowCount.current) return;
      rows.upsert(page.rows, { onlyShown: true });
      bump();
    }
  }, [rows, bump, readPage, readCount, windowCount]);

  /**
   * The window read again where it stands, by its end of the order (rows inserted after
   * the last one it holds show): from the first row when it holds it, else from the last.
   */
  const again = useCallback(async () => {
    const read = readCount.current;
    const win = windowCount.current;
    const fromStart = rows.atStart;
    const q = rowsPageQuery(queryRef.current, { at: fromStart ? "start" : "end" }, ROWS_PAGE);
    const page = await readPage({ ...q, total: "true" });
    if (read !== readCount.current || win !== windowCount.current) return;
    windowCount.current++;
    const total = page.total ?? rows.total;
    rows.reset(page, q, { start: fromStart ? 0 : total - page.rows.length, total });
    bump();
    void fill();
  }, [rows, bump, readPage, fill, queryRef, readCount, windowCount]);

  /** A full read starts at the top of the screen. */
  const top = useCallback(() => {
    wanted.current = { first: 0, last: 0 };
  }, []);

  return { readPage, fill, show, reread, again, top };
}
