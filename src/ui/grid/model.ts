/**
 * The grid's rows in the browser: a map by id plus their order, with cell events folded
 * in by the merge rule (`merge.ts`). The order is the position order, or, when the rows
 * were read sorted by a column, the order the server gave them in (rows that arrive
 * later by event follow, by position: the browser does not sort). Plain data, no React:
 * the page re-renders when `version` moves. `list()` is rebuilt only after a change.
 */
import { type CellEvent, type CellView, mergeCell, newerCell } from "./merge";

export interface RowView {
  id: string;
  position: number;
  data: Record<string, unknown>;
  cells: Record<string, CellView>;
}

export class GridRows {
  private readonly byId = new Map<string, RowView>();
  /** The outputs each shown cell's event wrote (`rowId` → `groupId` → outputs and attempt). */
  private readonly written = new Map<
    string,
    Map<string, { executionId: string; outputs: Record<string, unknown> }>
  >();
  private ordered: RowView[] | null = [];
  /** Ids in the server's order when the rows were read sorted; null: position order. */
  private serverOrder: { ids: string[]; listed: Set<string> } | null = null;
  version = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): RowView | undefined {
    return this.byId.get(id);
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
      const byPosition = (a: RowView, b: RowView) => a.position - b.position;
      const order = this.serverOrder;
      if (!order) this.ordered = [...this.byId.values()].sort(byPosition);
      else {
        const listed = order.ids
          .map((id) => this.byId.get(id))
          .filter((r): r is RowView => r !== undefined);
        const later = [...this.byId.values()].filter((r) => !order.listed.has(r.id));
        this.ordered = [...listed, ...later.sort(byPosition)];
      }
    }
    return this.ordered;
  }

  private changed(): void {
    this.version++;
    this.ordered = null;
  }

  /**
   * Replaces everything with the first page of a read (a first load or a reset);
   * `serverOrdered`: the read was sorted by a column, keep its order.
   */
  reset(rows: RowView[], serverOrdered = false): void {
    this.byId.clear();
    this.written.clear();
    for (const r of rows) this.byId.set(r.id, r);
    this.serverOrder = serverOrdered ? { ids: [], listed: new Set() } : null;
    this.follow(rows);
    this.changed();
  }

  /** A further page of the same read: merged like any read, listed after the pages before. */
  appendPage(rows: RowView[]): void {
    this.upsert(rows);
    this.follow(rows);
  }

  private follow(rows: readonly RowView[]): void {
    const order = this.serverOrder;
    if (!order) return;
    for (const r of rows) {
      if (order.listed.has(r.id)) continue;
      order.listed.add(r.id);
      order.ids.push(r.id);
    }
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

  remove(ids: readonly string[]): void {
    for (const id of ids) {
      this.byId.delete(id);
      this.written.delete(id);
    }
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
