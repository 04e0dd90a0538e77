"use client";
/**
 * PLACEHOLDER for "Use in a table…" (helper D writes the real one with this signature):
 * adds the workflow as a group on a chosen table with its input and output mapping.
 */
import type { ReactNode } from "react";

export interface UseInTableProps {
  workflowId: string;
  workflowName: string;
  definition: unknown | null;
}

export function UseInTable(_props: UseInTableProps): ReactNode {
  return null;
}
