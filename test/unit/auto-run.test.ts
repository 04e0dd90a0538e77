import { describe, expect, it } from "vitest";
import { TableSchema } from "@/contracts/table";
import {
  autoRunDependencies,
  autoRunUnheld,
  dependenciesMet,
  nextAutoGroup,
  reArmedByEdit,
} from "@/domain/auto-run";

const schema = TableSchema.parse({
  columns: ["email", "ok", "domain", "company", "size", "manual"].map((id) => ({
    id,
    name: id,
    type: "text",
  })),
  groups: [
    {
      id: "size_g",
      name: "S",
      kind: "workflow",
      workflowId: "w",
      dependsOn: ["company"],
      inputs: { c: "company" },
      outputs: [{ columnId: "size", from: "x" }],
      autoRun: true,
    },
    {
      id: "domain_g",
      name: "D",
      kind: "workflow",
      workflowId: "w",
      dependsOn: ["email", "ok"],
      inputs: { e: "email" },
      outputs: [{ columnId: "domain", from: "x" }],
      autoRun: true,
    },
    {
      id: "company_g",
      name: "C",
      kind: "workflow",
      workflowId: "w",
      dependsOn: ["domain"],
      inputs: { d: "domain" },
      outputs: [{ columnId: "company", from: "x" }],
      autoRun: true,
    },
    {
      id: "manual_g",
      name: "M",
      kind: "workflow",
      workflowId: "w",
      dependsOn: ["email"],
      outputs: [{ columnId: "manual", from: "x" }],
      autoRun: false,
    },
  ],
});

describe("auto-run rules", () => {
  it("a Stop of some groups leaves unheld the auto-run groups neither stopped nor downstream of them", () => {
    // company_g reads domain_g's output, size_g reads company_g's: a Stop of domain_g holds all three.
    expect(autoRunUnheld(schema, ["domain_g"])).toEqual([]);
    expect(autoRunUnheld(schema, ["company_g"])).toEqual(["domain_g"]);
    expect(autoRunUnheld(schema, ["manual_g"]).sort()).toEqual(["company_g", "domain_g", "size_g"]);
    // A Stop of every group holds them all.
    expect(autoRunUnheld(schema, null)).toEqual([]);
  });

  it("only autoRun groups with a non-empty dependsOn auto-run", () => {
    expect(Object.keys(autoRunDependencies(schema)).sort()).toEqual([
      "company_g",
      "domain_g",
      "size_g",
    ]);
  });

  it("a checkbox that is false is an unmet dependency", () => {
    const g = schema.groups.find((x) => x.id === "domain_g");
    if (!g) throw new Error("fixture");
    expect(dependenciesMet(g, { email: "a@b.c", ok: false })).toBe(false);
    expect(dependenciesMet(g, { email: "a@b.c", ok: true })).toBe(true);
    expect(dependenciesMet(g, { email: "", ok: true })).toBe(false);
  });

  it("the next auto group follows dependency order and skips present cells and the group just finished", () => {
    const data = { email: "a@b.c", ok: true, domain: "b.c", company: "B" };
    expect(nextAutoGroup(schema, data, new Set())).toBe("domain_g");
    expect(nextAutoGroup(schema, data, new Set(["domain_g"]))).toBe("company_g");
    expect(nextAutoGroup(schema, data, new Set(["domain_g"]), "company_g")).toBe("size_g");
    expect(
      nextAutoGroup(schema, data, new Set(["domain_g", "company_g", "size_g"])),
    ).toBeUndefined();
  });

  it("an edit re-arms exactly the groups downstream of the edited columns, in order", () => {
    expect(reArmedByEdit(schema, ["domain"])).toEqual({
      groupIds: ["company_g", "size_g"],
      clearColumns: ["size", "company"],
    });
    // manual_g reads email too, but it is not auto-run: its results stay.
    expect(reArmedByEdit(schema, ["email"]).groupIds).toEqual(["domain_g", "company_g", "size_g"]);
    expect(reArmedByEdit(schema, ["size"])).toEqual({ groupIds: [], clearColumns: [] });
  });

  it("an edited output column is kept, its downstream re-armed", () => {
    const r = reArmedByEdit(schema, ["domain", "company"]);
    expect(r.clearColumns).toEqual(["size"]);
  });
});
