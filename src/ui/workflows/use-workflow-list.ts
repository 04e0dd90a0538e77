"use client";
/**
 * The workspace's workflows by id and name, read once when the editor opens: what a
 * workflow or foreach block may name, and null until known (so no id is called unknown
 * before the list has come, nor when it could not be read).
 */
import { useMemo } from "react";
import { answer, api } from "../api";
import { useListFetch } from "../use-list-fetch";

export interface WorkflowRef {
  id: string;
  name: string;
}

const readWorkflows = async (): Promise<WorkflowRef[]> =>
  (await answer(api.GET("/api/workflows"))).workflows.map((w) => ({ id: w.id, name: w.name }));

export function useWorkflowList(): { workflows: WorkflowRef[]; ids: ReadonlySet<string> | null } {
  const { list } = useListFetch(readWorkflows);
  return useMemo(
    () => ({ workflows: list ?? [], ids: list === null ? null : new Set(list.map((w) => w.id)) }),
    [list],
  );
}
