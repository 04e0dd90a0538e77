"use client";
/**
 * What the group editor loads to offer its sources: the workspace's workflows and the
 * built-in enrichments (once, when the editor opens), and the chosen workflow itself
 * (for its inputs and block ids), each with its loading or failure state.
 */
import { useEffect, useState } from "react";
import type { EnrichmentView } from "@/contracts/enrichments";
import { answer, api, describeError, type WorkflowAnswer } from "../api";

export type Loadable<T> =
  | { state: "loading" }
  | { state: "ready"; value: T }
  | { state: "error"; message: string };

/** The workflow last asked for: `id` tells a stale answer from the current choice. */
export type WorkflowDetail = { id: string } & Loadable<WorkflowAnswer>;

/** The catalogues: workflows of the workspace and built-in enrichments. */
export function useSourceCatalogues(): {
  workflows: Loadable<WorkflowAnswer[]>;
  enrichments: Loadable<EnrichmentView[]>;
} {
  const [workflows, setWorkflows] = useState<Loadable<WorkflowAnswer[]>>({ state: "loading" });
  const [enrichments, setEnrichments] = useState<Loadable<EnrichmentView[]>>({
    state: "loading",
  });

  useEffect(() => {
    let live = true;
    const loadWorkflows = async () => {
      try {
        const r = await answer(api.GET("/api/workflows"));
        if (live) setWorkflows({ state: "ready", value: r.workflows });
      } catch (err) {
        if (live) setWorkflows({ state: "error", message: describeError(err) });
      }
    };
    const loadEnrichments = async () => {
      try {
        const r = await answer(api.GET("/api/enrichments"));
        if (live) setEnrichments({ state: "ready", value: r.enrichments });
      } catch (err) {
        if (live) setEnrichments({ state: "error", message: describeError(err) });
      }
    };
    void loadWorkflows();
    void loadEnrichments();
    return () => {
      live = false;
    };
  }, []);

  return { workflows, enrichments };
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
