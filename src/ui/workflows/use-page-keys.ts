"use client";
/**
 * The editor's hold on the page: Ctrl/⌘+S saves unsaved changes, Ctrl/⌘+Z and
 * Ctrl/⌘+Shift+Z undo and redo the definition's edits, and leaving with unsaved changes
 * asks first (links and the nav are full page loads).
 */
import { useEffect, useRef } from "react";
import { undoShortcut } from "./draft-history";

/** Ctrl+S or ⌘+S (with Shift or not), but not with Alt. */
export function isSaveShortcut(e: Pick<KeyboardEvent, "metaKey" | "ctrlKey" | "altKey" | "key">) {
  return (e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "s";
}

/** Ctrl/⌘+S saves when `dirty`; the handler reads the latest `save` and `dirty` through refs. */
export function useSaveShortcut(save: () => Promise<boolean>, dirty: boolean): void {
  const saveRef = useRef(save);
  const dirtyRef = useRef(dirty);
  useEffect(() => {
    saveRef.current = save;
    dirtyRef.current = dirty;
  });
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      if (!isSaveShortcut(e)) return;
      e.preventDefault();
      if (dirtyRef.current) void saveRef.current();
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, []);
}

export function useLeaveWarning(dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);
}

/**
 * Ctrl/⌘+Z undoes and Ctrl/⌘+Shift+Z redoes the draft's edits, in the JSON text too (its
 * own undo would not know the graph's edits). Other fields (the name) keep their own.
 */
export function useUndoShortcut(undo: () => void, redo: () => void): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent) => {
      const which = undoShortcut(e);
      if (which === null) return;
      const t = e.target;
      const field = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement;
      if (field && !t.closest("[data-draft-undo]")) return;
      e.preventDefault();
      if (which === "undo") undo();
      else redo();
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, [undo, redo]);
}
