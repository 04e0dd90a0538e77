"use client";
/**
 * The Run ▾ menu — the toolbar's, for every group, or a group header's, for that group —
 * and the dialogs two of its items open (Run first N rows…, Run matching…). Every item
 * closes the menu; each run or stop it asks for goes to the page as a request, so the
 * page's dry-run confirmation applies to all of them alike.
 */
import { useState } from "react";
import type { Group, TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import { FirstNDialog, StaleDialog } from "./Dialogs";
import { RunMatchingDialog } from "./RunMatchingDialog";
import { runScope, type Selection, selectedCount } from "./selection";
import type { RunRequest, StopScope } from "./use-run-control";

/** Where the menu opens and for which group (null: every group). */
export interface MenuAnchor {
  group: Group | null;
  x: number;
  y: number;
}

type MenuDialog = { kind: DialogKind; group: Group | null } | null;
type DialogKind = "firstN" | "matching" | "stale";

export function RunMenu({
  anchor,
  table,
  selected,
  total,
  filter,
  onRun,
  onStop,
  onClose,
}: {
  anchor: MenuAnchor | null;
  table: TableView | null;
  selected: Selection;
  /** The rows the filter matches (what a `matching` selection holds). */
  total: number;
  /** The grid's filter, which Run matching… starts from. */
  filter: WhereCondition[];
  onRun(req: RunRequest): void;
  onStop(scope: StopScope): void;
  onClose(): void;
}) {
  const [dialog, setDialog] = useState<MenuDialog>(null);
  const scoped = (group: Group | null) => (group ? { groupIds: [group.id] } : {});
  const item = (req: RunRequest) => () => {
    onClose();
    onRun(req);
  };
  const opens = (kind: DialogKind) => () => {
    setDialog({ kind, group: anchor?.group ?? null });
    onClose();
  };
  const group = anchor?.group ?? null;
  const count = selectedCount(selected, total);

  return (
    <>
      {anchor && (
        <>
          {/* biome-ignore lint/a11y/noStaticElementInteractions: a click outside closes the menu; its items are buttons */}
          <div
            role="presentation"
            style={{ position: "fixed", inset: 0, zIndex: 20 }}
            onMouseDown={onClose}
          />
          <div className="menu" style={{ left: anchor.x, top: anchor.y, position: "fixed" }}>
            <button type="button" onClick={item({ ...scoped(group), mode: "all" })}>
              Run all rows
            </button>
            <button type="button" onClick={item({ ...scoped(group), mode: "incomplete" })}>
              Run incomplete rows
            </button>
            <button type="button" onClick={item({ ...scoped(group), mode: "new" })}>
              Run new rows (never run)
            </button>
            <button type="button" onClick={item({ ...scoped(group), mode: "failed" })}>
              Run failed only (last attempt errored)
            </button>
            <button
              type="button"
              onClick={item({ ...scoped(group), mode: "failed", resume: true })}
            >
              Resume failed (skip the blocks that finished)
            </button>
            <button type="button" onClick={opens("stale")}>
              Run stale rows…
            </button>
            <button type="button" onClick={opens("firstN")}>
              Run first N rows…
            </button>
            <button type="button" onClick={opens("matching")}>
              Run matching…
            </button>
            <button
              type="button"
              disabled={count === 0}
              onClick={item({ ...scoped(group), mode: "all", ...runScope(selected, filter) })}
            >
              Run selected rows ({count.toLocaleString()})
            </button>
            {group && (
              <button
                type="button"
                onClick={() => {
                  onClose();
                  onStop({ groupIds: [group.id] });
                }}
              >
                Stop this group
              </button>
            )}
          </div>
        </>
      )}
      {dialog?.kind === "firstN" && (
        <FirstNDialog
          group={dialog.group}
          onClose={() => setDialog(null)}
          onRun={(n) => {
            setDialog(null);
            onRun({ ...scoped(dialog.group), mode: "all", limit: n });
          }}
        />
      )}
      {dialog?.kind === "stale" && (
        <StaleDialog
          group={dialog.group}
          onClose={() => setDialog(null)}
          onRun={(staleAfterHours) => {
            setDialog(null);
            onRun({ ...scoped(dialog.group), mode: "stale", staleAfterHours });
          }}
        />
      )}
      {dialog?.kind === "matching" && table && (
        <RunMatchingDialog
          table={table}
          group={dialog.group}
          initial={filter}
          onClose={() => setDialog(null)}
          onRun={(req) => {
            setDialog(null);
            onRun({ ...scoped(dialog.group), ...req });
          }}
        />
      )}
    </>
  );
}
