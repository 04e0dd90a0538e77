"use client";
/**
 * The workflow being edited, as a draft against what was last saved: loading it (and
 * loading again after a failure: `useWorkflowLoad`), the name and definition text, the
 * parsed definition (the last valid one kept while the text doesn't parse), whether there
 * are unsaved changes, Save and Deploy with the API's issues (`useWorkflowSave`),
 * Ctrl/⌘+S, and the warning on leaving with unsaved changes (`use-page-keys`).
 */
import { useEffect, useMemo, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import type { WorkflowAnswer } from "../api";
import { type DefinitionSummary, describeDefinition } from "./graph";
import { canonicalJson, parseJsonText } from "./json-text";
import { useLeaveWarning, useSaveShortcut } from "./use-page-keys";
import { useWorkflowLoad } from "./use-workflow-load";
import { useWorkflowSave } from "./use-workflow-save";

/** The API reports definition issues under this path. */
export const DEF = "definition";

export type WorkflowDraft = ReturnType<typeof useWorkflowDraft>;

export function useWorkflowDraft(id: string) {
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const saving = useWorkflowSave(id);
  const { load, retry } = useWorkflowLoad(id, (w: WorkflowAnswer) => {
    setName(w.name);
    setText(JSON.stringify(w.definition, null, 2));
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

  return {
    load,
    retry,
    name,
    setName,
    text,
    setText,
    deployedVersion: saving.deployedVersion,
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
