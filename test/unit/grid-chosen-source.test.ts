/**
 * The group editor's facts about its chosen source, as far as it has loaded, and the
 * form's own: the id that follows the name, the fields shown, the names a new column may
 * not take, and what a new output row starts as.
 */
import { describe, expect, it } from "vitest";
import type { EnrichmentView } from "@/contracts/enrichments";
import type { WorkflowAnswer } from "@/ui/api";
import {
  chosenSource,
  idForName,
  newColumnName,
  nextOutput,
  shownFields,
  takenNames,
} from "@/ui/grid/chosen-source";
import { type GroupForm, groupFormFrom, NEW_COLUMN, outputRow } from "@/ui/grid/group-form";
import type { Loadable, WorkflowDetail } from "@/ui/grid/use-group-sources";

const workflow: WorkflowAnswer = {
  id: "wf_1",
  name: "Score",
  deployedVersion: 3,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-02T00:00:00.000Z",
  definition: {
    inputs: [{ name: "email", type: "text", required: true }],
    blocks: [
      { id: "clean", type: "transform", expression: "row.email", next: "score" },
      { id: "score", type: "transform", expression: "1" },
    ],
  },
} as WorkflowAnswer;

const emailDomain: EnrichmentView = {
  id: "email_domain",
  name: "E-mail domain",
  description: "The domain of an e-mail address",
  cost: 0,
  inputs: [{ id: "email", type: "text", required: true, description: "An address" }],
  outputs: [
    { id: "domain", type: "text", description: "The domain" },
    { id: "is_free", type: "boolean", description: "A free provider" },
  ],
};

const ready = <T>(value: T): Loadable<T> => ({ state: "ready", value });
const loading = { state: "loading" } as const;
const catalogues = { workflows: ready([workflow]), enrichments: ready([emailDomain]) };
const form = (over: Partial<GroupForm>): GroupForm => ({ ...groupFormFrom(), ...over });
const detail = (d: Loadable<WorkflowAnswer>, id = "wf_1"): WorkflowDetail => ({ id, ...d });

describe("the chosen source", () => {
  it("is the workflow read in full, with its inputs and blocks", () => {
    const s = chosenSource(
      form({ workflowId: "wf_1" }),
      detail({ state: "ready", value: workflow }),
      catalogues,
    );
    expect(s.workflow).toBe(workflow);
    expect(s.inputNames).toEqual(["email"]);
    expect(s.blocks.map((b) => b.id)).toEqual(["clean", "score"]);
    expect(s.outputIds).toBeNull();
    expect(s.sourceLoading).toBe(false);
    expect(s.deployedVersion).toBe(3);
  });

  it("is loading, with the listed workflow's deployed version, until the one chosen is read", () => {
    const stale = chosenSource(
      form({ workflowId: "wf_1" }),
      detail({ state: "ready", value: workflow }, "wf_0"),
      catalogues,
    );
    expect(stale.workflow).toBeNull();
    expect(stale.sourceInputs).toBeNull();
    expect(stale.sourceLoading).toBe(true);
    expect(stale.listedWorkflow).toBe(workflow);
    expect(stale.deployedVersion).toBe(3);
    const none = chosenSource(form({ workflowId: "" }), null, catalogues);
    expect(none.sourceLoading).toBe(false);
  });

  it("says why the chosen workflow could not be read", () => {
    const s = chosenSource(
      form({ workflowId: "wf_1" }),
      detail({ state: "error", message: "gone" }),
      catalogues,
    );
    expect(s.workflowFailed).toBe("gone");
    expect(s.workflow).toBeNull();
    expect(s.sourceLoading).toBe(false);
  });

  it("is the enrichment from the catalogue, with its output ids", () => {
    const f = form({ kind: "enrichment", enrichmentId: "email_domain" });
    const s = chosenSource(f, null, catalogues);
    expect(s.enrichment).toBe(emailDomain);
    expect(s.inputNames).toEqual(["email"]);
    expect(s.outputIds).toEqual(["domain", "is_free"]);
    const waiting = chosenSource(f, null, { ...catalogues, enrichments: loading });
    expect(waiting.enrichment).toBeNull();
    expect(waiting.outputIds).toBeNull();
    expect(waiting.sourceLoading).toBe(true);
  });
});

describe("the group form's own facts", () => {
  it("derives the id from the name, avoiding the table's group ids", () => {
    expect(idForName("  ", [])).toBe("");
    expect(idForName("Score leads", [])).toBe("score_leads");
    expect(idForName("Score leads", [{ id: "score_leads" }])).not.toBe("score_leads");
  });

  it("shows the base fields, each input's and each output row's", () => {
    const row = outputRow("score", NEW_COLUMN, "Score");
    const fields = shownFields([{ name: "email" }], [row]);
    for (const f of ["name", "id", "kind", "source", "dependsOn", "autoRun", "runIf"])
      expect(fields.has(f)).toBe(true);
    expect(fields.size).toBe(10 + 1 + 2);
  });

  it("keeps a new column off the table's names and the other new outputs'", () => {
    const a = outputRow("domain", NEW_COLUMN, "Domain");
    const b = outputRow("is_free", "existing", "");
    const c = outputRow("x", NEW_COLUMN, "X");
    expect(takenNames([{ name: "Email" }], [a, b, c], c.key)).toEqual(["Email", "Domain"]);
    expect(takenNames([{ name: "Email" }], [a, b, c])).toEqual(["Email", "Domain", "X"]);
  });

  it("names a workflow's only output after the group, any other after its output", () => {
    const only = form({ name: " Lead score ", outputs: [outputRow("score")] });
    expect(newColumnName(only, "Score", "score", [])).toBe("Lead score");
    expect(newColumnName({ ...only, name: "" }, "Score", "score", ["score"])).toBe("Score 2");
    expect(newColumnName({ ...only, name: "" }, undefined, "score", [])).toBe("Result");
    const enrichment = form({ kind: "enrichment", name: "Domains", outputs: [outputRow()] });
    expect(newColumnName(enrichment, undefined, "is_free", [])).toBe("Is free");
  });

  it("starts a new output row from the next unused block or output, else empty", () => {
    const used = form({ outputs: [outputRow("score", NEW_COLUMN, "Score")] });
    expect(nextOutput(used, workflow.definition.blocks, null, ["Score"])).toEqual({
      from: "clean",
      column: NEW_COLUMN,
      newName: "Clean",
    });
    const enrichment = form({
      kind: "enrichment",
      outputs: [outputRow("domain", NEW_COLUMN, "Domain")],
    });
    expect(nextOutput(enrichment, [], emailDomain, ["Domain"])).toEqual({
      from: "is_free",
      column: NEW_COLUMN,
      newName: "Is free",
    });
    expect(nextOutput(form({}), [], null, [])).toEqual({ from: "", column: "", newName: "" });
  });
});
