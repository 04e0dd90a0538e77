"use client";
/**
 * The toolbar's saved views: a picker ("All rows" or one of the table's views, the open
 * one marked "edited" once the filter bar differs from it), "Save view" (the filter bar
 * as a new view, named in place), and for the open view: Update (save the bar into it),
 * Rename and Delete.
 */
import { useState } from "react";
import type { SavedView } from "@/contracts/views";

interface Props {
  /** The table's views; null until read. */
  views: SavedView[] | null;
  open: SavedView | null;
  /** Whether the filter bar no longer shows the open view as saved. */
  edited: boolean;
  onOpen(view: SavedView | null): void;
  onSave(name: string): void;
  onUpdate(): void;
  onRename(name: string): void;
  onDelete(): void;
}

export function ViewPicker({ views, open, edited, ...on }: Props) {
  /** Naming a new view, or the open one anew. */
  const [naming, setNaming] = useState<{ kind: "new" | "rename"; name: string } | null>(null);
  const submit = () => {
    const name = naming?.name.trim();
    if (!naming || !name) return;
    if (naming.kind === "new") on.onSave(name);
    else on.onRename(name);
    setNaming(null);
  };

  if (naming) {
    return (
      <form
        className="row"
        data-testid="view-naming"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <input
          className="input"
          data-testid="view-name"
          aria-label="View name"
          placeholder="View name"
          maxLength={200}
          value={naming.name}
          onChange={(e) => setNaming({ ...naming, name: e.target.value })}
        />
        <button type="submit" className="btn btn-small btn-primary" data-testid="view-name-save">
          {naming.kind === "new" ? "Save view" : "Rename"}
        </button>
        <button type="button" className="btn btn-small btn-ghost" onClick={() => setNaming(null)}>
          Cancel
        </button>
      </form>
    );
  }

  return (
    <div className="row" data-testid="views">
      <select
        className="input"
        data-testid="view-picker"
        aria-label="Saved view"
        value={open?.id ?? ""}
        disabled={views === null}
        onChange={(e) => on.onOpen(views?.find((v) => v.id === e.target.value) ?? null)}
      >
        <option value="">All rows</option>
        {(views ?? []).map((v) => (
          <option key={v.id} value={v.id}>
            {v.name}
            {v.id === open?.id && edited ? " (edited)" : ""}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="btn btn-small"
        data-testid="view-save"
        disabled={views === null}
        onClick={() => setNaming({ kind: "new", name: "" })}
      >
        Save view
      </button>
      {open && edited && (
        <button
          type="button"
          className="btn btn-small"
          data-testid="view-update"
          title={`Save the filter bar into “${open.name}”`}
          onClick={on.onUpdate}
        >
          Update
        </button>
      )}
      {open && (
        <>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            data-testid="view-rename"
            onClick={() => setNaming({ kind: "rename", name: open.name })}
          >
            Rename
          </button>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            data-testid="view-delete"
            onClick={on.onDelete}
          >
            Delete view
          </button>
        </>
      )}
    </div>
  );
}
