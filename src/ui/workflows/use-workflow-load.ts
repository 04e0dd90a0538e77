"use client";
/**
 * Reading the workflow to edit: loading, missing (404), failed (with why) or ready, and
 * reading again after a failure. The workflow read is handed to `loaded` (the latest one
 * given), and a read that a newer one or unmounting overtook is dropped.
 */
import { useEffect, useRef, useState } from "react";
import { ApiError, answer, api, describeError, type WorkflowAnswer } from "../api";

export type Load =
  | { state: "loading" }
  | { state: "missing" }
  | { state: "failed"; message: string }
  | { state: "ready" };

export function useWorkflowLoad(
  id: string,
  loaded: (w: WorkflowAnswer) => void,
): { load: Load; retry(): void } {
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const loadedRef = useRef(loaded);
  useEffect(() => {
    loadedRef.current = loaded;
  });

  useEffect(() => {
    // `attempt` is only there to load again after a failure.
    void attempt;
    let cancelled = false;
    const run = async () => {
      try {
        const w = await answer(api.GET("/api/workflows/{id}", { params: { path: { id } } }));
        if (cancelled) return;
        loadedRef.current(w);
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

  const retry = () => {
    setLoad({ state: "loading" });
    setAttempt((n) => n + 1);
  };
  return { load, retry };
}
