/**
 * The grid's waterfall: the editor's steps round-trip to the API's group, what the form
 * checks before saving, where the API's step issues land, and the cell's label naming
 * the step that won.
 */
import { describe, expect, it } from "vitest";
import type { Column, Group, WaterfallGroup } from "@/contracts/table";
import { checkTableSchema } from "@/domain/table-schema";
import { ENRICHMENT_IDS } from "@/enrichments/catalog";
import { listEnrichments } from "@/enrichments/registry";
import { describeCell } from "@/ui/grid/CellStatus";
import { type GroupForm, groupFormFrom, outputRow } from "@/ui/grid/group-form";
import { buildGroupPatch, groupIssues } from "@/ui/grid/group-patch";
import {
  checkRow,
  emptyStep,
  moved,
  stepField,
  stepFromForm,
  stepsFormFrom,
  stepsSummary,
  validateSteps,
} from "@/ui/grid/waterfall-form";

const columns: Column[] = [
  { id: "domain", name: "Domain", type: "text" },
  { id: "site", name: "Site", type: "text" },
  { id: "company", name: "Company", type: "text" },
];

const waterfall: WaterfallGroup = {
  id: "company",
  name: "Company",
  kind: "waterfall",
  steps: [
    {
      enrichmentId: "company_lookup",
      inputs: { domain: "domain" },
      outputs: { name: "name" },
      validate: [{ output: "name", op: "contains", value: "Inc" }],
    },
    {
      workflowId: "wf_1",
      version: "deployed",
      inputs: { url: "site" },
      outputs: { name: "x.title" },
    },
  ],
  outputs: [{ columnId: "company", from: "name" }],
  dependsOn: [],
  autoRun: false,
};

const enrichments = listEnrichments().map((e) => ({
  id: e.id,
  name: e.name,
  description: e.description,
  cost: e.cost,
  inputs: e.inputs.map((i) => ({ ...i })),
  outputs: e.outputs.map((o) => ({ ...o })),
}));

describe("the waterfall editor", () => {
  it("a saved waterfall comes back from its form unchanged", () => {
    const form = groupFormFrom(waterfall);
    expect(form.kind).toBe("waterfall");
    const patch = buildGroupPatch({ columns, groups: [waterfall] }, form, {
      editingId: "company",
      inputNames: [],
    });
    expect(patch.body.groups).toEqual([waterfall]);
    expect(checkTableSchema({ columns, groups: patch.body.groups }, ENRICHMENT_IDS)).toEqual([]);
  });

  it("a step's unmapped inputs and outputs are left out, checks get numbers where typed", () => {
    const step = {
      ...emptyStep(),
      source: "enrichment:company_lookup",
      inputs: { domain: "domain", other: "" },
      outputs: { name: "name", gone: "size" },
      validate: [{ ...checkRow("name"), op: "gte" as const, value: "10" }, checkRow("")],
    };
    expect(stepFromForm(step, ["name"])).toEqual({
      enrichmentId: "company_lookup",
      inputs: { domain: "domain" },
      outputs: { name: "name" },
      validate: [{ output: "name", op: "gte", value: 10 }],
    });
    expect(stepFromForm(emptyStep(), ["name"])).toBeNull();
  });

  it("asks for a step, a source for each, and a mapped output", () => {
    const base: Pick<GroupForm, "outputs" | "steps"> = {
      outputs: [outputRow("name", "company")],
      steps: [],
    };
    expect(validateSteps(base, enrichments)).toEqual({ source: "Add at least one step" });
    const blank = emptyStep();
    const unmapped = { ...emptyStep(), source: "enrichment:company_lookup" };
    expect(validateSteps({ ...base, steps: [blank, unmapped] }, enrichments)).toEqual({
      [stepField.source(blank.key)]: "Choose what this step runs",
      [stepField.outputs(unmapped.key)]: "Map at least one output",
    });
  });

  it("puts the API's step issues on that step's fields", () => {
    const form = groupFormFrom(waterfall);
    const patch = buildGroupPatch({ columns, groups: [waterfall] }, form, {
      editingId: "company",
      inputNames: [],
    });
    const second = form.steps[1]?.key ?? "";
    const split = groupIssues(
      [
        { path: "groups.0.steps.1.workflowId", message: "has an approval block" },
        { path: "groups.0.steps.1.outputs", message: "a step maps at least one output" },
      ],
      patch,
    );
    expect(split.fields).toEqual({
      [stepField.source(second)]: "has an approval block",
      [stepField.outputs(second)]: "a step maps at least one output",
    });
  });

  it("sums up what each step of an attempt did", () => {
    expect(
      stepsSummary({
        steps: [
          { step: 1, status: "rejected", costCredits: 5 },
          { step: 2, status: "found", costCredits: 5 },
          { step: 3, status: "not_called", costCredits: 0 },
        ],
      }),
    ).toBe("1 rejected (5 cr) · 2 found (5 cr) · 3 not called");
    expect(stepsSummary({ enrichmentId: "x" })).toBeNull();
    expect(stepsSummary(null)).toBeNull();
  });

  it("moves steps up and down, and a new waterfall starts with one empty step", () => {
    expect(moved(["a", "b", "c"], 0, 1)).toEqual(["b", "a", "c"]);
    expect(moved(["a", "b", "c"], 0, -1)).toEqual(["a", "b", "c"]);
    expect(stepsFormFrom(undefined)).toHaveLength(1);
  });
});

describe("a waterfall cell", () => {
  const cell = { executionId: "ex2_1", status: "completed" as const, outcome: "ok" as const };

  it("shows which step won, with what it runs", () => {
    expect(describeCell({ ...cell, winningStep: 1 }, waterfall).label).toBe(
      "Found · step 1 (company_lookup)",
    );
    expect(describeCell({ ...cell, winningStep: 2 }, waterfall).label).toBe(
      "Found · step 2 (workflow wf_1)",
    );
  });

  it("says no step found anything, and other groups keep their labels", () => {
    expect(describeCell({ ...cell, outcome: "not_found" }, waterfall).title).toBe(
      "No step found a valid answer",
    );
    const other: Group = {
      ...waterfall,
      kind: "enrichment",
      enrichmentId: "x",
      inputs: {},
    } as Group;
    expect(describeCell({ ...cell, winningStep: 1 }, other).label).toBe("Done");
  });
});
