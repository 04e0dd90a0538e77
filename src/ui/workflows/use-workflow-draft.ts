"use client";
/**
 * The workflow being edited, as a draft against what was last saved: loading it (and
 * loading again after a failure: `useWorkflowLoad`), the name, the definition and its
 * JSON text kept together with their undo history (`draft-history`: graph and form edits
 * rewrite the text, typed text that parses replaces the definition), the parsed text
 * (the last valid summary kept while it doesn't parse), whether there are unsaved
 * changes, Save and Deploy with the API's issues (`useWorkflowSave`), Ctrl/⌘+S,
 * Ctrl/⌘+Z and Ctrl/⌘+Shift+Z, and the warning on leaving with unsaved changes.
 */
import { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import type { WorkflowAnswer } from "../api";
import { draftReducer, initialHistory } from "./draft-history";
import { type DefinitionSummary, describeDefinition } from "./graph";
import { canonicalJson, parseJsonText } from "./json-text";
import { useLeaveWarning, useSaveShortcut, useUndoShortcut } from "./use-page-keys";
import { useWorkflowLoad } from "./use-workflow-load";
import { useWorkflowSave } from "./use-workflow-save";

/** The API reports definition issues under this path. */
export const DEF = "definition";

export type WorkflowDraft = ReturnType<typeof useWorkflowDraft>;

export function useWorkflowDraft(id: string) {
  const [name, setName] = useState("");
  const [history, dispatch] = useReducer(draftReducer, null, () => initialHistory());
  const text = history.present.text;
  const setText = useCallback(
    (t: string) => dispatch({ kind: "type", text: t, at: Date.now() }),
    [],
  );
  /**
   * A graph or form edit: one undo step, the text rewritten from the definition; edits
   * typed in one form field (`burstKey`) in a burst are one step.
   */
  const edit = useCallback((definition: unknown, burstKey?: string) => {
    const burst = burstKey === undefined ? {} : { burst: { key: burstKey, at: Date.now() } };
    dispatch({ kind: "edit", definition, ...burst });
  }, []);
  const undo = useCallback(() => dispatch({ kind: "undo" }), []);
  const redo = useCallback(() => dispatch({ kind: "redo" }), []);
  const saving = useWorkflowSave(id);
  const { load, retry } = useWorkflowLoad(id, (w: WorkflowAnswer) => {
    setName(w.name);
    dispatch({ kind: "reset", definition: w.definition });
    saving.settle(w, canonicalJson(w.definition));
  });
  useRerenderEvery(30_000);
  const { parsed, current, summary, stale, canonical } = useParsedDefinition(text);

  const trimmedName = name.trim();
  const ready = load.state === "ready";
  const { baseline, busy } = saving;
  const dirty = ready && (trimmedName !== baseline.name || canonical !== baseline.definition);
  const canSave = ready && parsed.ok && trimmedName !== "" && busy === null;
  useLeaveWarning(dirty);

  const save = async (): Promise<boolean> => {
    if (!canSave || !parsed.ok) return false;
    // Sent as typed, whatever its shape: the API's issues say what is wrong, and where.
    return saving.save(trimmedName, parsed.value as Schemas["WorkflowDefinition"]);
  };
  const deploy = async () => {
    if (dirty && !(await save())) return;
    await saving.deploy();
  };
  useSaveShortcut(save, dirty);
  useUndoShortcut(undo, redo);

  return {
    load,
    retry,
    name,
    setName,
    text,
    setText,
    /** The text's value when it parses, else null. */
    definition: parsed.ok ? parsed.value : null,
    edit,
    undo,
    redo,
    canUndo: history.past.length > 0,
    canRedo: history.future.length > 0,
    deployedVersion: saving.deployedVersion,
    setDeployedVersion: saving.setDeployedVersion,
    savedAt: saving.savedAt,
    busy,
    issues: saving.issues,
    error: saving.error,
    notice: saving.notice,
    setNotice: saving.setNotice,
    parsed,
    current,
    summary,
    stale,
    trimmedName,
    dirty,
    canSave,
    save,
    deploy,
  };
}

/** "Saved 3 minutes ago" stays true: a render every `ms`. */
function useRerenderEvery(ms: number): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => setTick((n) => n + 1), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
}

/**
 * The definition text parsed, its summary (null while it doesn't parse), the last good
 * summary kept meanwhile, and its canonical JSON to compare with the saved one.
 */
function useParsedDefinition(text: string) {
  const parsed = useMemo(() => parseJsonText(text), [text]);
  const current = useMemo(() => (parsed.ok ? describeDefinition(parsed.value) : null), [parsed]);
  const [lastGood, setLastGood] = useState<DefinitionSummary | null>(null);
  useEffect(() => {
    if (current) setLastGood(current);
  }, [current]);
  const canonical = useMemo(() => (parsed.ok ? canonicalJson(parsed.value) : null), [parsed]);
  return { parsed, current, summary: current ?? lastGood, stale: current === null, canonical };
}
