"use client";
/**
 * The bar over a table's grid: its name, whether the live stream is connected, how many
 * rows have loaded, the table's auto-run switch, and the buttons: + Row, + Column, + Group,
 * + AI column, run or delete the selected rows, the Run ▾ menu for every group, Stop all,
 * Schedules, Destinations, Export CSV; and the saved views' picker.
 */
import type { ReactNode } from "react";
import type { PatchedTable, TableView } from "@/contracts/table";
import { csvExportUrl } from "../api-raw";
import { AutoRunSwitch } from "./AutoRunSwitch";
import { DestinationsButton } from "./DestinationsDialog";
import { RowBudgetSetting } from "./RowBudgetSetting";
import type { MenuAnchor } from "./RunMenu";
import type { StreamState } from "./table-stream";
import type { LiveTable } from "./use-table";

const STREAM_LABEL: Record<StreamState, string> = {
  live: "Live",
  connecting: "Connecting…",
  reconnecting: "Reconnecting…",
};

interface Props {
  tableId: string;
  table: TableView | null;
  live: Pick<LiveTable, "stream" | "loaded">;
  selectedCount: number;
  /** Whether anything could be stopped: a cell queued or running, or a run active. */
  canStop: boolean;
  onAddRow(): void;
  onAddColumn(): void;
  onAddGroup(): void;
  onAddAiColumn(): void;
  onRunSelected(): void;
  onDeleteSelected(): void;
  onRunMenu(anchor: MenuAnchor): void;
  onStopAll(): void;
  onSchedules(): void;
  onAutoRun(table: PatchedTable): void;
  onError(message: string): void;
  /** The saved views' picker (`ViewPicker`). */
  views?: ReactNode;
}

export function GridToolbar({ tableId, table, live, selectedCount, canStop, views, ...on }: Props) {
  return (
    <div className="grid-toolbar">
      <h1 data-testid="table-name">{table?.name ?? "…"}</h1>
      <span className={`live ${live.stream}`} data-testid="stream-state" data-state={live.stream}>
        <span className="dot" />
        {STREAM_LABEL[live.stream]}
      </span>
      {!live.loaded.done && (
        <span className="muted">Loading rows… {live.loaded.rows.toLocaleString()}</span>
      )}
      {views}
      <div className="spacer" />
      {table && <AutoRunSwitch table={table} onChanged={on.onAutoRun} onError={on.onError} />}
      {table && <RowBudgetSetting table={table} onChanged={on.onAutoRun} onError={on.onError} />}
      <button type="button" className="btn" onClick={on.onAddRow}>
        + Row
      </button>
      <button type="button" className="btn" onClick={on.onAddColumn}>
        + Column
      </button>
      <button type="button" className="btn" data-testid="add-group" onClick={on.onAddGroup}>
        + Group
      </button>
      <button type="button" className="btn" data-testid="add-ai-column" onClick={on.onAddAiColumn}>
        + AI column
      </button>
      {selectedCount > 0 && (
        <>
          <button type="button" className="btn" onClick={on.onRunSelected}>
            Run {selectedCount.toLocaleString()} selected
          </button>
          <button type="button" className="btn btn-danger" onClick={on.onDeleteSelected}>
            Delete {selectedCount.toLocaleString()}
          </button>
        </>
      )}
      <button
        type="button"
        className="btn btn-primary"
        data-testid="run-all-menu"
        disabled={(table?.groups.length ?? 0) === 0}
        onClick={(e) => {
          const r = e.currentTarget.getBoundingClientRect();
          on.onRunMenu({ group: null, x: r.left, y: r.bottom + 4 });
        }}
      >
        Run ▾
      </button>
      <button
        type="button"
        className="btn btn-danger"
        data-testid="stop-all"
        disabled={!canStop}
        onClick={on.onStopAll}
      >
        Stop all
      </button>
      <button type="button" className="btn" data-testid="schedules-open" onClick={on.onSchedules}>
        Schedules
      </button>
      <DestinationsButton tableId={tableId} />
      <a className="btn" href={csvExportUrl(tableId)} download>
        Export CSV
      </a>
    </div>
  );
}
