"use client";
/**
 * Saving and deploying the workflow being edited, and what the last save or read left:
 * the baseline the draft is compared with (the name and the definition's canonical JSON),
 * when it was saved, the deployed version, the API's issues, and the error or notice.
 */
import { useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError, type Issue, type WorkflowAnswer } from "../api";
import { canonicalJson } from "./json-text";
import { saveRefusal } from "./save-refusal";

/** What was last saved: the name and the definition's canonical JSON. */
interface Baseline {
  name: string;
  definition: string;
}

export function useWorkflowSave(id: string) {
  const [baseline, setBaseline] = useState<Baseline>({ name: "", definition: "" });
  const [deployedVersion, setDeployedVersion] = useState<number | null>(null);
  const [savedAt, setSavedAt] = useState<string | null>(null);
  const [busy, setBusy] = useState<"saving" | "deploying" | null>(null);
  const [issues, setIssues] = useState<Issue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  /** The workflow as read or saved, with `definition` its canonical JSON, is the baseline. */
  const settle = (w: WorkflowAnswer, definition: string) => {
    setBaseline({ name: w.name, definition });
    setSavedAt(w.updatedAt);
    setDeployedVersion(w.deployedVersion);
  };

  const save = async (
    name: string,
    definition: Schemas["WorkflowDefinition"],
  ): Promise<boolean> => {
    const sentCanonical = canonicalJson(definition);
    setBusy("saving");
    setError(null);
    setNotice(null);
    try {
      const w = await answer(
        api.PUT("/api/workflows/{id}", { params: { path: { id } }, body: { name, definition } }),
      );
      // The baseline is what was sent: the API fills defaults in, which are no edit.
      settle(w, sentCanonical);
      setIssues([]);
      return true;
    } catch (err) {
      const refused = saveRefusal(err);
      setIssues(refused.issues);
      setError(refused.error);
      return false;
    } finally {
      setBusy(null);
    }
  };

  const deploy = async () => {
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

  return {
    baseline,
    deployedVersion,
    setDeployedVersion,
    savedAt,
    busy,
    issues,
    error,
    notice,
    setNotice,
    settle,
    save,
    deploy,
  };
}
