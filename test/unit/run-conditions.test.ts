/**
 * A group's run condition columns are columns it reads (`columnsRead`): group order, the
 * cycle check, the re-arm on edit and a Stop's hold on auto-run all follow from that, and
 * the schema check puts each refused condition at `groups.<i>.runIf.<j>`.
 */
import { describe, expect, it } from "vitest";
import { TableSchema } from "@/contracts/table";
import { autoRunUnheld, reArmedByEdit } from "@/domain/auto-run";
import { checkTableSchema, columnsRead, groupOrder, upstreamGroups } from "@/domain/table-schema";
import { runIfOf } from "@/domain/where";

/** `tier_g` writes `tier`; `look_g` reads `domain` and runs only where `tier` is "pro". */
const schema = TableSchema.parse({
  columns: [
    { id: "domain", name: "Domain", type: "text" },
    { id: "tier", name: "Tier", type: "text" },
    { id: "company", name: "Company", type: "text" },
    { id: "n", name: "N", type: "number" },
  ],
  groups: [
    {
      id: "look_g",
      name: "Look",
      kind: "enrichment",
      enrichmentId: "company_lookup",
      inputs: { domain: "domain" },
      outputs: [{ columnId: "company", from: "name" }],
      dependsOn: ["domain"],
      autoRun: true,
      runIf: [{ column: "tier", op: "eq", value: "pro" }],
    },
    {
      id: "tier_g",
      name: "Tier",
      kind: "workflow",
      workflowId: "w",
      inputs: { d: "domain" },
      outputs: [{ columnId: "tier", from: "out" }],
    },
  ],
});
const known = new Set(["company_lookup"]);

describe("run condition columns are columns the group reads", () => {
  it("joins columnsRead", () => {
    expect(columnsRead(schema.groups[0] as TableSchema["groups"][number])).toEqual([
      "domain",
      "tier",
    ]);
  });

  it("orders the group after the one writing its condition's column", () => {
    expect(groupOrder(schema)).toEqual(["tier_g", "look_g"]);
  });

  it("a Stop of the group writing the condition's column holds its auto-run", () => {
    expect(upstreamGroups(schema, "look_g").sort()).toEqual(["look_g", "tier_g"]);
    expect(autoRunUnheld(schema, ["tier_g"])).toEqual([]);
    expect(autoRunUnheld(schema, ["other"])).toEqual(["look_g"]);
  });

  it("an edit of the condition's column re-arms the auto-run group and clears its output", () => {
    expect(reArmedByEdit(schema, ["tier"])).toEqual({
      groupIds: ["look_g"],
      clearColumns: ["company"],
    });
    expect(reArmedByEdit(schema, ["n"])).toEqual({ groupIds: [], clearColumns: [] });
  });

  it("a condition that closes a loop is a cycle", () => {
    const loop = TableSchema.parse({
      ...schema,
      groups: schema.groups.map((g) =>
        g.id === "tier_g" ? { ...g, runIf: [{ column: "company", op: "empty" }] } : g,
      ),
    });
    expect(checkTableSchema(loop, known)).toEqual([
      { path: "groups", message: expect.stringContaining("dependency cycle") },
    ]);
  });
});

describe("the schema check of run conditions", () => {
  const withRunIf = (runIf: unknown) =>
    TableSchema.parse({
      ...schema,
      groups: schema.groups.map((g) => (g.id === "look_g" ? { ...g, runIf } : g)),
    });

  it("accepts the table as it is, and types its conditions for the where compiler", () => {
    expect(checkTableSchema(schema, known)).toEqual([]);
    expect(runIfOf(schema, schema.groups[0] as TableSchema["groups"][number])).toEqual({
      ok: true,
      value: [{ column: "tier", type: "text", op: "eq", value: "pro" }],
    });
  });

  it("refuses the group's own output, an unknown column, a wrong operator or value", () => {
    const issues = checkTableSchema(
      withRunIf([
        { column: "company", op: "not_empty" },
        { column: "ghost", op: "empty" },
        { column: "tier", op: "gt", value: 3 },
        { column: "n", op: "eq", value: "many" },
      ]),
      known,
    );
    expect(issues.map((i) => i.path)).toEqual([
      "groups.0.runIf.0",
      "groups.0.runIf.1.column",
      "groups.0.runIf.2.op",
      "groups.0.runIf.3.value",
    ]);
  });

  it("refuses a group's cell as a run condition (the contract takes column conditions)", () => {
    const parsed = TableSchema.safeParse({
      ...schema,
      groups: [{ ...schema.groups[0], runIf: [{ group: "tier_g", status: "error" }] }],
    });
    expect(parsed.success).toBe(false);
    for (const issue of parsed.error?.issues ?? [])
      expect(issue.path.slice(0, 4)).toEqual(["groups", 0, "runIf", 0]);
  });
});
