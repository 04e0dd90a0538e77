"use client";
/**
 * The workflow being edited, as a draft against what was last saved: loading it (and
 * loading again after a failure), the name and definition text, the parsed definition
 * (the last valid one kept while the text doesn't parse), whether there are unsaved
 * changes, Save and Deploy with the API's issues, Ctrl/⌘+S, and the warning on leaving
 * with unsaved changes.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { ApiError, answer, api, describeError, type Issue } from "../api";
import { type DefinitionSummary, describeDefinition } from "./graph";
import { canonicalJson, parseJsonText } from "./json-text";

/** The API reports definition issues under this path. */
export const DEF = "definition";

export type Load =
  | { state: "loading" }
  | { state: "missing" }
  | { state: "failed"; message: string }
  | { state: "ready" };

/** What was last saved: the name and the definition's canonical JSON. */
interface Baseline {
  name: string;
  definition: string;
}

/** The issues without repeats: each is listed once. */
function uniqueIssues(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export type WorkflowDraft = ReturnType<typeof useWorkflowDraft>;

export function useWorkflowDraft(id: string) {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const [baseline, setBaseline] = useState<Baseline>({ name: "", definition: "" });
  const [deployedVersion, setDeployedVersion] = useState<number | null>(null);
  const [savedAt, setSavedAt] = useState<string | null>(null);
  const [busy, setBusy] = useState<"saving" | "deploying" | null>(null);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [lastGood, setLastGood] = useState<DefinitionSummary | null>(null);
  const [, setTick] = useState(0);

  useEffect(() => {
    // `attempt` is only there to load again after a failure.
    void attempt;
    let cancelled = false;
    const run = async () => {
      try {
        const w = await answer(api.GET("/api/workflows/{id}", { params: { path: { id } } }));
        if (cancelled) return;
        setName(w.name);
        setText(JSON.stringify(w.definition, null, 2));
        setBaseline({ name: w.name, definition: canonicalJson(w.definition) });
        setDeployedVersion(w.deployedVersion);
        setSavedAt(w.updatedAt);
        setLoad({ state: "ready" });
      } catch (err) {
        if (cancelled) return;
        if (err instanceof ApiError && err.status === 404) setLoad({ state: "missing" });
        else setLoad({ state: "failed", message: describeError(err) });
      }
    };
    void run();
    return () => {
      cancelled = true;
    };
  }, [id, attempt]);

  // "Saved 3 minutes ago" stays true.
  useEffect(() => {
    const timer = window.setInterval(() => setTick((n) => n + 1), 30_000);
    return () => window.clearInterval(timer);
  }, []);

  const parsed = useMemo(() => parseJsonText(text), [text]);
  const current = useMemo(() => (parsed.ok ? describeDefinition(parsed.value) : null), [parsed]);
  useEffect(() => {
    if (current) setLastGood(current);
  }, [current]);
  const summary = current ?? lastGood;
  const stale = current === null;
  const canonical = useMemo(() => (parsed.ok ? canonicalJson(parsed.value) : null), [parsed]);

  const trimmedName = name.trim();
  const ready = load.state === "ready";
  const dirty = ready && (trimmedName !== baseline.name || canonical !== baseline.definition);
  const canSave = ready && parsed.ok && trimmedName !== "" && busy === null;

  // Leaving with unsaved changes asks first (links and the nav are full page loads).
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [dirty]);

  const save = async (): Promise<boolean> => {
    if (!canSave || !parsed.ok) return false;
    // Sent as typed, whatever its shape: the API's issues say what is wrong, and where.
    const definition = parsed.value as Schemas["WorkflowDefinition"];
    const sentCanonical = canonicalJson(definition);
    setBusy("saving");
    setError(null);
    setNotice(null);
    try {
      const w = await answer(
        api.PUT("/api/workflows/{id}", {
          params: { path: { id } },
          body: { name: trimmedName, definition },
        }),
      );
      // The baseline is what was sent: the API fills defaults in, which are no edit.
      setBaseline({ name: w.name, definition: sentCanonical });
      setSavedAt(w.updatedAt);
      setDeployedVersion(w.deployedVersion);
      setIssues([]);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.issues.length > 0) {
        setIssues(uniqueIssues(err.issues));
        setError(err.message);
      } else {
        setIssues([]);
        setError(describeError(err));
      }
      return false;
    } finally {
      setBusy(null);
    }
  };

  const deploy = async () => {
    if (dirty && !(await save())) return;
    setBusy("deploying");
    setError(null);
    setNotice(null);
    try {
      const r = await answer(api.POST("/api/workflows/{id}/deploy", { params: { path: { id } } }));
      setDeployedVersion(r.version);
      setNotice(`Deployed version ${r.version}`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  };

  // Ctrl/⌘+S saves; the handler reads the latest `save` through a ref.
  const saveRef = useRef<() => Promise<boolean>>(save);
  const dirtyRef = useRef(dirty);
  useEffect(() => {
    saveRef.current = save;
    dirtyRef.current = dirty;
  });
  const onKeyDown = useCallback((e: KeyboardEvent) => {
    if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "s") {
      e.preventDefault();
      if (dirtyRef.current) void saveRef.current();
    }
  }, []);
  useEffect(() => {
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, [onKeyDown]);

  const retry = () => {
    setLoad({ state: "loading" });
    setAttempt((n) => n + 1);
  };

  return {
    load,
    retry,
    name,
    setName,
    text,
    setText,
    deployedVersion,
    savedAt,
    busy,
    issues,
    error,
    notice,
    setNotice,
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
