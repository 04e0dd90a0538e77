"use client";
/**
 * The grid's header rows: "select all" (the rows loaded: `selection.ts`; `SelectionBar`
 * offers every matching row) and the row count over the lead column, a value
 * column's name (which opens its editor), type, sort and hide buttons, and over each group's
 * columns the group's kind, name (which opens the group editor), whether it auto-runs or
 * has a run condition (its conditions on hover) and Run ▾ menu, over a bar of its
 * progress (done, in flight, failed, not run, as shares of the rows). With
 * groups there are two header rows: leaf columns outside any group show in the lower one,
 * the upper one is blank above them.
 */
import { flexRender, type Header, type HeaderGroup } from "@tanstack/react-table";
import type { GroupProgress, TableProgress } from "@/contracts/progress";
import type { GridActions } from "./grid-actions";
import { metaOf } from "./grid-columns";
import type { RowView } from "./model";
import { barShares, barTitle } from "./progress-bar";
import type { RowSort } from "./row-query";
import { SortButton } from "./SortButton";
import { allChecked, headerToggled, type Selection } from "./selection";

const HEIGHT = 32;

type HeaderActions = Pick<GridActions, "editColumn" | "hideColumn" | "editGroup" | "groupMenu">;

/** The sort the rows were read in; a column header's sort button cycles it. */
export interface GridSort {
  current: RowSort | null;
  onSort(columnId: string): void;
}

interface Props {
  headerGroups: HeaderGroup<RowView>[];
  rows: RowView[];
  /** The rows that match (the header's count; `rows` are those held). */
  total: number;
  selected: Selection;
  onSelect(selection: Selection): void;
  actions: HeaderActions;
  sort: GridSort | undefined;
  progress: TableProgress | null;
}

export function GridHeader({
  headerGroups,
  rows,
  total,
  selected,
  onSelect,
  actions,
  sort,
  progress,
}: Props) {
  // The header picks the rows loaded; the bar under the toolbar offers all that match.
  const loaded = rows.map((r) => r.id);
  const all = allChecked(selected, loaded);
  const selectAll = () => onSelect(headerToggled(selected, loaded));
  return (
    <div className="grid-head">
      {headerGroups.map((hg, depth) => (
        <div key={hg.id} className="row" style={{ gap: 0, height: HEIGHT }}>
          {hg.headers.map((h) => (
            <HeaderCell
              key={h.id}
              header={h}
              upper={depth < headerGroups.length - 1}
              lead={{ all, count: total, selectAll }}
              actions={actions}
              sort={sort}
              progress={progress}
            />
          ))}
        </div>
      ))}
    </div>
  );
}

function HeaderCell({
  header: h,
  upper,
  lead,
  actions,
  sort,
  progress,
}: {
  header: Header<RowView, unknown>;
  /** In the upper of two header rows, which only group headers fill. */
  upper: boolean;
  lead: { all: boolean; count: number; selectAll(): void };
  actions: HeaderActions;
  sort: GridSort | undefined;
  progress: TableProgress | null;
}) {
  const meta = metaOf(h.column);
  const isGroup = h.column.columns.length > 0;
  const group = meta?.kind === "status" ? meta.group : null;
  const style = { width: h.getSize(), height: HEIGHT };
  if (h.isPlaceholder || (upper && !isGroup)) {
    return <div className="grid-hcell" style={{ ...style, borderBottomColor: "transparent" }} />;
  }
  if (isGroup && group) {
    return (
      <div className="grid-hcell group" style={style} data-testid={`group-header-${group.id}`}>
        <span className={`kind ${group.kind}`}>{group.kind}</span>
        <button
          type="button"
          className="linklike"
          title="Edit group"
          onClick={() => actions.editGroup(group)}
        >
          {group.name}
        </button>
        {group.autoRun && <span className="type">auto</span>}
        {meta?.kind === "status" && meta.runIf && (
          <span
            className="type"
            data-testid={`run-condition-${group.id}`}
            title={`Runs only if ${meta.runIf}`}
          >
            if
          </span>
        )}
        <button
          type="button"
          className="btn btn-small hcell-menu"
          data-testid={`run-menu-${group.id}`}
          onClick={(e) => actions.groupMenu(group, e.currentTarget)}
        >
          Run ▾
        </button>
        {progress && (
          <ProgressBar
            group={progress.groups.find((g) => g.groupId === group.id)}
            rows={progress.rows}
            groupId={group.id}
          />
        )}
      </div>
    );
  }
  if (meta?.kind === "lead") {
    return (
      <div className="grid-hcell" style={style}>
        <input
          type="checkbox"
          aria-label="Select all rows"
          checked={lead.all}
          onChange={lead.selectAll}
        />
        <span className="muted">{lead.count.toLocaleString()} rows</span>
      </div>
    );
  }
  if (meta?.kind === "value") {
    return (
      <div className="grid-hcell" style={style}>
        <button
          type="button"
          className="linklike"
          title="Edit column"
          onClick={() => actions.editColumn(meta.column)}
        >
          {meta.column.name}
        </button>
        <span className="type">{meta.column.type}</span>
        {sort && <SortButton column={meta.column} sort={sort.current} onSort={sort.onSort} />}
        <button
          type="button"
          className="icon-btn"
          data-testid={`hide-${meta.column.id}`}
          aria-label={`Hide ${meta.column.name}`}
          title={`Hide ${meta.column.name}`}
          onClick={() => actions.hideColumn(meta.column)}
        >
          ⊘
        </button>
      </div>
    );
  }
  return (
    <div className="grid-hcell" style={style}>
      {flexRender(h.column.columnDef.header, h.getContext())}
    </div>
  );
}

/** The group's cells as shares of the table's rows; the shares ride on data attributes. */
function ProgressBar({
  group,
  rows,
  groupId,
}: {
  group: GroupProgress | undefined;
  rows: number;
  groupId: string;
}) {
  if (!group) return null;
  const s = barShares(group, rows);
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  return (
    <div
      className="group-progress"
      title={barTitle(group, rows)}
      data-testid={`group-progress-${groupId}`}
      data-done={s.done}
      data-active={s.active}
      data-failed={s.failed}
    >
      <span className="done" style={{ width: pct(s.done) }} />
      <span className="active" style={{ width: pct(s.active) }} />
      <span className="failed" style={{ width: pct(s.failed) }} />
      <span className="idle" style={{ width: pct(s.idle) }} />
    </div>
  );
}
