"use client";
/**
 * PLACEHOLDER for the version history (helper A writes the real one with this
 * signature): each deployed version, a diff against the draft, and rolling back.
 */
import type { ReactNode } from "react";

export interface HistoryPanelProps {
  workflowId: string;
  draft: unknown | null;
  deployedVersion: number | null;
  onDeployed: (version: number) => void;
}

export function HistoryPanel(_props: HistoryPanelProps): ReactNode {
  return null;
}
