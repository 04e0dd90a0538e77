"use client";
/**
 * Above the graph: the palette of block types (each adds a block of that type with its
 * defaults under a free id) and Undo / Redo of the definition's edits.
 */
import { BLOCK_TYPES, type BlockType } from "@/contracts/workflow";
import { BLOCK_HELP } from "./block-help";

export function GraphToolbar(props: {
  canAdd: boolean;
  onAdd: (type: BlockType) => void;
  canUndo: boolean;
  canRedo: boolean;
  onUndo: () => void;
  onRedo: () => void;
}) {
  const { canAdd, onAdd, canUndo, canRedo, onUndo, onRedo } = props;
  return (
    <div className="wf-toolbar" role="toolbar" aria-label="Workflow graph tools">
      <span className="muted">Add:</span>
      {BLOCK_TYPES.map((type) => (
        <button
          key={type}
          type="button"
          className="btn btn-small wf-palette-item"
          data-testid={`palette-${type}`}
          disabled={!canAdd}
          title={BLOCK_HELP[type].summary}
          onClick={() => onAdd(type)}
        >
          {type}
        </button>
      ))}
      <div className="spacer" />
      <button
        type="button"
        className="btn btn-small"
        data-testid="graph-undo"
        disabled={!canUndo}
        title="Undo (Ctrl/⌘+Z)"
        onClick={onUndo}
      >
        Undo
      </button>
      <button
        type="button"
        className="btn btn-small"
        data-testid="graph-redo"
        disabled={!canRedo}
        title="Redo (Ctrl/⌘+Shift+Z)"
        onClick={onRedo}
      >
        Redo
      </button>
    </div>
  );
}
