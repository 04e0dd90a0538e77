"use client";
/**
 * A table's runs with their counts: read on demand, refreshed at most once per 600 ms
 * whatever asks (events, buttons), and every second while a run is active so the
 * progress bars move.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api } from "../api";

export type RunView = Schemas["RunView"];

export function useTableRuns(tableId: string) {
  const [runs, setRuns] = useState<RunView[]>([]);
  const runsTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const loadRuns = useCallback(async () => {
    try {
      const r = await answer(
        api.GET("/api/tables/{id}/runs", { params: { path: { id: tableId } } }),
      );
      setRuns(r.runs);
    } catch {
      // A missed refresh is retried by the next event or tick.
    }
  }, [tableId]);

  /** At most one runs refresh per 600 ms, whatever triggers it. */
  const refreshRuns = useCallback(() => {
    if (runsTimer.current) return;
    runsTimer.current = setTimeout(() => {
      runsTimer.current = null;
      void loadRuns();
    }, 600);
  }, [loadRuns]);

  // Active runs: counts refresh every second so the progress bars move.
  const active = runs.some((r) => r.status === "active");
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void loadRuns(), 1_000);
    return () => clearInterval(t);
  }, [active, loadRuns]);

  return { runs, loadRuns, refreshRuns };
}
