"use client";
/**
 * Each group's progress for the header bars: read from `GET /progress` with the rest of
 * the table, then replaced by each `progress` event (the server sends one at most once a
 * second while cells change, and reads it off counters: no count over the rows).
 */
import { useCallback, useState } from "react";
import type { TableProgress } from "@/contracts/progress";
import { answer, api } from "../api";

export function useTableProgress(tableId: string): {
  progress: TableProgress | null;
  loadProgress(): Promise<void>;
  setProgress(p: TableProgress): void;
} {
  const [progress, setProgress] = useState<TableProgress | null>(null);
  const loadProgress = useCallback(async () => {
    setProgress(
      await answer(api.GET("/api/tables/{id}/progress", { params: { path: { id: tableId } } })),
    );
  }, [tableId]);
  return { progress, loadProgress, setProgress };
}
