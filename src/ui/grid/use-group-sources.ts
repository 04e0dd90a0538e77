"use client";
/**
 * What the group editor loads to offer its sources: the workspace's workflows and the
 * built-in enrichments (once, when the editor opens), and the chosen workflow itself
 * (for its inputs and block ids), each with its loading or failure state.
 */
import { useEffect, useState } from "react";
import type { EnrichmentView } from "@/contracts/enrichments";
import { answer, api, describeError, type WorkflowAnswer } from "../api";
import { type ListFetch, useListFetch } from "../use-list-fetch";

export type Loadable<T> =
  | { state: "loading" }
  | { state: "ready"; value: T }
  | { state: "error"; message: string };

/** The workflow last asked for: `id` tells a stale answer from the current choice. */
export type WorkflowDetail = { id: string } & Loadable<WorkflowAnswer>;

const readWorkflows = async (): Promise<WorkflowAnswer[]> =>
  (await answer(api.GET("/api/workflows"))).workflows;
const readEnrichments = async (): Promise<EnrichmentView[]> =>
  (await answer(api.GET("/api/enrichments"))).enrichments;

/** A list read once, as loading, ready or failed. */
function loadable<T>({ list, error }: ListFetch<T>): Loadable<T[]> {
  if (list !== null) return { state: "ready", value: list };
  if (error !== null) return { state: "error", message: error };
  return { state: "loading" };
}

/** The catalogues: workflows of the workspace and built-in enrichments. */
export function useSourceCatalogues(): {
  workflows: Loadable<WorkflowAnswer[]>;
  enrichments: Loadable<EnrichmentView[]>;
} {
  const workflows = useListFetch(readWorkflows);
  const enrichments = useListFetch(readEnrichments);
  return { workflows: loadable(workflows), enrichments: loadable(enrichments) };
}

/** The chosen workflow ("" = none): null until one is chosen; the last one is kept. */
export function useWorkflowDetail(workflowId: string): WorkflowDetail | null {
  const [detail, setDetail] = useState<WorkflowDetail | null>(null);

  useEffect(() => {
    if (workflowId === "") return;
    let live = true;
    setDetail({ id: workflowId, state: "loading" });
    const load = async () => {
      try {
        const w = await answer(
          api.GET("/api/workflows/{id}", { params: { path: { id: workflowId } } }),
        );
        if (live) setDetail({ id: workflowId, state: "ready", value: w });
      } catch (err) {
        if (live) setDetail({ id: workflowId, state: "error", message: describeError(err) });
      }
    };
    void load();
    return () => {
      live = false;
    };
  }, [workflowId]);

  return detail;
}
