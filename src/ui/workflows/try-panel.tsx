"use client";
/**
 * PLACEHOLDER for the try panel (helper D writes the real one with this signature): runs
 * the draft through `POST /api/workflows/:id/test` and hands each block's run to the
 * graph through `onResults`.
 */
import type { ReactNode } from "react";

export interface BlockRun {
  status: "completed" | "error" | "paused" | "cancelled";
  output: unknown;
  error: string | null;
  durationMs: number;
}

export interface TryPanelProps {
  workflowId: string;
  definition: unknown | null;
  dirty: boolean;
  inputNames: string[];
  onResults: (results: Record<string, BlockRun> | null) => void;
}

export function TryPanel(_props: TryPanelProps): ReactNode {
  return null;
}
