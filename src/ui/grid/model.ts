/**
 * The grid's rows in the browser: a window of the rows the read's order has — a few pages
 * in a row, at an index (`start`) among the `total` rows that match — held as a map by id
 * plus their order, with cell events folded in by the merge rule (`merge.ts`). The order
 * is the server's (the pages as read, one after another); rows that arrive later by event
 * (only while the window holds the last row) follow, by position: the browser does not
 * sort. Plain data, no React: the page re-renders when `version` moves. `list()` is
 * rebuilt only after a change.
 */
import { type CellEvent, type CellView, mergeCell, newerCell } from "./merge";

export interface RowView {
  id: string;
  position: number;
  data: Record<string, unknown>;
  cells: Record<string, CellView>;
}

/** One page of the window: what read it (to read it again) and the ids it brought. */
export interface WindowPage<Q> {
  query: Q;
  ids: string[];
  /** The answer's cursors: null when nothing is before (after) this page. */
  prevCursor: string | null;
  nextCursor: string | null;
}

/** What a read of a page answered: its rows and cursors. */
export interface ReadPage {
  rows: RowView[];
  prevCursor: string | null;
  nextCursor: string | null;
}

export class GridRows<Q = unknown> {
  private readonly byId = new Map<string, RowView>();
  /** The outputs each shown cell's event wrote (`rowId` → `groupId` → outputs and attempt). */
  private readonly written = new Map<
    string,
    Map<string, { executionId: string; outputs: Record<string, unknown> }>
  >();
  private ordered: RowView[] | null = [];
  /** The window's pages, in the order. */
  private pages: WindowPage<Q>[] = [];
  /** Rows deleted since the count (each leaves `total` once). */
  private readonly removed = new Set<string>();
  /** The index of the window's first row among all the rows that match. */
  start = 0;
  /** How many rows match (the server's count, moved by the events since). */
  total = 0;
  version = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): RowView | undefined {
    return this.byId.get(id);
  }

  /** Whether the window holds the first (last) row of the order. */
  get atStart(): boolean {
    return (this.pages[0]?.prevCursor ?? null) === null;
  }
  get atEnd(): boolean {
    return (this.pages.at(-1)?.nextCursor ?? null) === null;
  }
  get prevCursor(): string | null {
    return this.pages[0]?.prevCursor ?? null;
  }
  get nextCursor(): string | null {
    return this.pages.at(-1)?.nextCursor ?? null;
  }
  get pageCount(): number {
    return this.pages.length;
  }
  /** The reads of the window's pages, first to last. */
  pageQueries(): Q[] {
    return this.pages.map((p) => p.query);
  }

  /** Ids of the rows held whose position is after `after` and at most `last`. */
  idsInPositions(after: number, last: number): string[] {
    const ids: string[] = [];
    for (const r of this.byId.values())
      if (r.position > after && r.position <= last) ids.push(r.id);
    return ids;
  }

  /** Rows in order (a new array after every change, the same one otherwise). */
  list(): RowView[] {
    if (!this.ordered) {
      const listed = new Set<string>();
      const inPages: RowView[] = [];
      for (const p of this.pages)
        for (const id of p.ids) {
          const r = this.byId.get(id);
          if (r && !listed.has(id)) {
            listed.add(id);
            inPages.push(r);
          }
        }
      const later = [...this.byId.values()].filter((r) => !listed.has(r.id));
      this.ordered = [...inPages, ...later.sort((a, b) => a.position - b.position)];
    }
    return this.ordered;
  }

  private changed(): void {
    this.version++;
    this.ordered = null;
  }

  /**
   * Replaces everything with one page read at `start` of `total` rows (a first load, a
   * new filter or sort, or a jump far from the window).
   */
  reset(page: ReadPage, query: Q, at: { start: number; total: number }): void {
    this.byId.clear();
    this.written.clear();
    this.removed.clear();
    this.pages = [];
    this.total = at.total;
    this.start = at.start;
    this.addPage(page, query, "end");
  }

  /** A page read next to the window: merged like any read, listed before or after it. */
  addPage(page: ReadPage, query: Q, side: "start" | "end"): void {
    const entry: WindowPage<Q> = {
      query,
      ids: page.rows.map((r) => r.id),
      prevCursor: page.prevCursor,
      nextCursor: page.nextCursor,
    };
    if (side === "end") this.pages.push(entry);
    else {
      this.pages.unshift(entry);
      this.start -= entry.ids.length;
    }
    this.upsert(page.rows);
    this.anchor();
  }

  /** Drops the first (last) page of the window, its rows with it. */
  dropPage(side: "start" | "end"): void {
    if (this.pages.length <= 1) return;
    const page = side === "start" ? this.pages.shift() : this.pages.pop();
    if (!page) return;
    const kept = new Set(this.pages.flatMap((p) => p.ids));
    // Rows added by event after the last page go with it.
    const gone =
      side === "end"
        ? [...this.byId.keys()].filter((id) => !kept.has(id))
        : page.ids.filter((id) => !kept.has(id));
    if (side === "start") this.start += page.ids.length;
    for (const id of gone) {
      this.byId.delete(id);
      this.written.delete(id);
    }
    this.changed();
  }

  /**
   * The window's ends are the order's: a window that holds the first row starts at 0; one
   * that holds the last ends at `total` (both: it holds them all). A seek lands at an
   * estimated index; reaching an end corrects it.
   */
  private anchor(): void {
    const held = this.list().length;
    if (this.atStart) this.start = 0;
    if (this.atStart && this.atEnd) this.total = held;
    else if (this.atEnd) this.start = Math.max(0, this.total - held);
    this.total = Math.max(this.total, this.start + held);
  }

  /** The server's count again (rows inserted or deleted since the last). */
  counted(total: number): void {
    this.total = Math.max(total, this.start + this.list().length);
    this.changed();
  }

  /**
   * Rows read from the API. A fetched cell replaces the one shown only if the merge rule
   * accepts it: a read that started before an event arrived must not undo that event —
   * nor the outputs that event wrote (an edit's answer can arrive after the re-run it
   * caused has already finished and said so).
   */
  upsert(rows: RowView[], opts: { onlyShown?: boolean } = {}): void {
    for (const r of rows) {
      const shown = this.byId.get(r.id);
      // Under a filter a row read by id is not known to match: only rows shown are updated.
      if (!shown && opts.onlyShown) continue;
      if (!shown) {
        this.byId.set(r.id, r);
        continue;
      }
      const cells = { ...shown.cells };
      let data = r.data;
      for (const [groupId, cell] of Object.entries(r.cells)) {
        const before = cells[groupId];
        const merged = newerCell(before, cell);
        cells[groupId] = merged;
        // The shown cell is newer than the read: so are the outputs its event wrote.
        const wrote = this.written.get(r.id)?.get(groupId);
        if (merged === before && wrote && wrote.executionId === merged.executionId)
          data = withOutputs(data, wrote.outputs);
      }
      this.byId.set(r.id, { ...r, data, cells });
    }
    this.changed();
  }

  /**
   * Rows deleted: out of the window, and those it held out of `total`, once each (a delete
   * the page made is told again by its event); with no filter the count is read again.
   */
  remove(ids: readonly string[]): void {
    for (const id of ids) {
      const held = this.byId.delete(id);
      this.written.delete(id);
      if (this.removed.has(id)) continue;
      this.removed.add(id);
      if (held) this.total = Math.max(0, this.total - 1);
    }
    for (const p of this.pages) p.ids = p.ids.filter((id) => this.byId.has(id));
    this.changed();
  }

  /** Folds one cell event in; false when it was refused or its row is not loaded. */
  applyCell(event: CellEvent): boolean {
    const row = this.byId.get(event.rowId);
    if (!row) return false;
    const { cell, outputs } = mergeCell(row.cells[event.groupId], event);
    if (cell === row.cells[event.groupId]) return false;
    if (!cell) {
      // Gone (cleared, withdrawn by a Stop or a halt): the row shows no cell for the group.
      const { [event.groupId]: _gone, ...cells } = row.cells;
      this.byId.set(row.id, { ...row, cells });
      this.changed();
      return true;
    }
    if (outputs) {
      const byGroup = this.written.get(row.id) ?? new Map();
      byGroup.set(event.groupId, { executionId: event.executionId, outputs });
      this.written.set(row.id, byGroup);
    }
    this.byId.set(row.id, {
      ...row,
      data: outputs ? withOutputs(row.data, outputs) : row.data,
      cells: { ...row.cells, [event.groupId]: cell },
    });
    this.changed();
    return true;
  }

  /** A value the user just saved, shown before the server's event confirms it. */
  setValue(rowId: string, columnId: string, value: unknown): void {
    const row = this.byId.get(rowId);
    if (!row) return;
    this.byId.set(rowId, { ...row, data: withOutputs(row.data, { [columnId]: value }) });
    this.changed();
  }
}

/** Outputs into row data: null clears a column (blanked outputs). */
function withOutputs(
  data: Record<string, unknown>,
  outputs: Record<string, unknown>,
): Record<string, unknown> {
  const next = { ...data };
  for (const [k, v] of Object.entries(outputs)) {
    if (v === null || v === undefined) delete next[k];
    else next[k] = v;
  }
  return next;
}
