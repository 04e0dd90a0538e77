/**
 * The side form's fields come from the blocks' zod schemas: every block type gets a form
 * whose fields are the schema's (less the graph editor's id, type and next), with the
 * schema's bounds; an emptied optional field removes its key and keeps the others; the
 * schema's issues land under the field they concern.
 */
import { describe, expect, it } from "vitest";
import { BLOCK_TYPES } from "@/contracts/workflow";
import {
  BLOCK_SCHEMAS,
  type BlockField,
  blockFields,
  isBlockType,
  TEMPLATE_FIELDS,
} from "@/ui/workflows/block-fields";
import { BLOCK_HELP } from "@/ui/workflows/block-help";
import {
  blockIssues,
  numberProblem,
  readNumber,
  readNumberOrExpression,
  textValue,
  withField,
  withGroupField,
} from "@/ui/workflows/block-values";

const field = (type: Parameters<typeof blockFields>[0], name: string): BlockField => {
  const f = blockFields(type).find((x) => x.name === name);
  if (!f) throw new Error(`no field ${name} on ${type}`);
  return f;
};

describe("every block type yields a form from its schema", () => {
  it.each(BLOCK_TYPES)("%s: the schema's fields less id, type and next", (type) => {
    const names = blockFields(type).map((f) => f.name);
    const schemaKeys = Object.keys(BLOCK_SCHEMAS[type].shape).filter(
      (k) => !["id", "type", "next"].includes(k),
    );
    expect(names.sort()).toEqual(schemaKeys.sort());
    expect(names).not.toContain("next");
  });

  it("no field falls back to raw JSON but the ones whose schema is JSON", () => {
    const json = BLOCK_TYPES.flatMap((type) =>
      blockFields(type)
        .filter((f) => f.kind.kind === "json")
        .map((f) => `${type}.${f.name}`),
    );
    expect(json.sort()).toEqual(["http.body", "llm.jsonSchema"]);
  });

  it("the example block of each type has no issue in its form", () => {
    for (const type of BLOCK_TYPES) {
      expect(blockIssues(type, BLOCK_HELP[type].example, blockFields(type))).toEqual([]);
    }
  });

  it("every template field named is a string field of its type", () => {
    for (const [type, names] of Object.entries(TEMPLATE_FIELDS)) {
      if (!isBlockType(type)) throw new Error(type);
      for (const name of names ?? []) {
        expect(["template", "map"]).toContain(field(type, name).kind.kind);
      }
    }
  });

  it("reads each field's kind: expressions, templates, numbers with bounds, enums, records, JSON, retry", () => {
    expect(field("transform", "expression").kind).toEqual({ kind: "expression", multiline: true });
    expect(field("foreach", "items").kind.kind).toBe("expression");
    expect(field("workflow", "inputs")).toMatchObject({
      required: false,
      kind: { kind: "map", values: "expression" },
    });
    expect(field("enrichment", "inputs")).toMatchObject({
      required: true,
      kind: { kind: "map", values: "expression" },
    });
    expect(field("http", "url").kind).toEqual({ kind: "template", multiline: false });
    expect(field("http", "headers").kind).toEqual({ kind: "map", values: "template" });
    expect(field("http", "method").kind).toEqual({
      kind: "enum",
      options: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"],
    });
    expect(field("http", "body").kind).toEqual({ kind: "json", object: false });
    expect(field("llm", "jsonSchema").kind).toEqual({ kind: "json", object: true });
    expect(field("llm", "prompt").kind.kind).toBe("template");
    expect(field("llm", "system").kind.kind).toBe("text");
    expect(field("llm", "baseUrl")).toMatchObject({
      required: false,
      kind: { kind: "text", max: 2_000 },
    });
    expect(field("llm", "model")).toMatchObject({
      required: true,
      kind: { kind: "text", min: 1, max: 200 },
    });
    expect(field("llm", "temperature").kind).toEqual({
      kind: "number",
      min: 0,
      max: 2,
      int: false,
    });
    expect(field("llm", "provider")).toMatchObject({ required: false, kind: { kind: "enum" } });
    expect(field("fail", "message")).toMatchObject({ required: true, kind: { kind: "template" } });
    expect(field("approval", "prompt")).toMatchObject({
      required: false,
      kind: { kind: "template" },
    });
    expect(field("wait", "ms").kind).toEqual({
      kind: "number-or-expression",
      min: 0,
      max: 30 * 24 * 3_600_000,
      int: true,
    });
    expect(field("foreach", "workflowId").kind).toEqual({ kind: "workflow" });
    expect(field("enrichment", "enrichmentId").kind).toEqual({ kind: "enrichment" });
    expect(field("http", "timeoutMs")).toMatchObject({
      required: false,
      kind: { kind: "number", min: 1, max: 3_600_000, int: true },
    });
    expect(field("http", "retry")).toMatchObject({
      required: false,
      kind: {
        kind: "group",
        fields: [
          {
            name: "attempts",
            path: "retry.attempts",
            required: true,
            kind: { kind: "number", min: 1, max: 10, int: true },
          },
          {
            name: "backoffMs",
            path: "retry.backoffMs",
            required: true,
            kind: { kind: "number", min: 0, max: 60_000 },
          },
        ],
      },
    });
  });

  it("puts the type's own fields first and the common ones last", () => {
    expect(blockFields("http").map((f) => f.name)).toEqual([
      "method",
      "url",
      "headers",
      "body",
      "name",
      "timeoutMs",
      "retry",
    ]);
  });
});

describe("writing fields keeps the rest of the block", () => {
  const block = { id: "a", type: "http", method: "GET", url: "x", next: ["b", "c"], extra: 1 };

  it("an emptied optional field removes its key; next and unknown keys stay", () => {
    const withName = withField(block, "name", textValue("hi", false));
    expect(withName).toEqual({ ...block, name: "hi" });
    const cleared = withField(withName, "name", textValue("", false));
    expect(cleared).toEqual(block);
    expect(Object.keys(cleared)).toEqual(Object.keys(block));
  });

  it("an emptied required text stays, as an empty string the schema refuses", () => {
    const emptied = withField(block, "url", textValue("", true));
    expect(emptied.url).toBe("");
    expect(blockIssues("http", emptied, blockFields("http"))).toContainEqual({
      field: "url",
      message: "must not be empty",
    });
  });

  it("retry is removed when both its fields are emptied", () => {
    const one = withGroupField(undefined, "attempts", 3, false);
    expect(one).toEqual({ attempts: 3 });
    expect(withGroupField(one, "attempts", undefined, false)).toBeUndefined();
  });
});

describe("numbers", () => {
  it("reads numbers from text and refuses the rest", () => {
    expect(readNumber("")).toEqual({ ok: true, value: undefined });
    expect(readNumber(" 42 ")).toEqual({ ok: true, value: 42 });
    expect(readNumber("1.5")).toEqual({ ok: true, value: 1.5 });
    expect(readNumber("12abc")).toEqual({ ok: false, message: "must be a number" });
  });

  it("holds them to the schema's bounds", () => {
    const timeout = field("http", "timeoutMs").kind;
    if (timeout.kind !== "number") throw new Error("kind");
    expect(numberProblem(0, timeout)).toBe("must be at least 1");
    expect(numberProblem(3_600_001, timeout)).toBe("must be at most 3,600,000");
    expect(numberProblem(1.5, timeout)).toBe("must be a whole number");
    expect(numberProblem(1000, timeout)).toBeNull();
    const temperature = field("llm", "temperature").kind;
    if (temperature.kind !== "number") throw new Error("kind");
    expect(numberProblem(0.7, temperature)).toBeNull();
    expect(numberProblem(2.5, temperature)).toBe("must be at most 2");
  });

  it("wait's ms is milliseconds when numeric, an expression otherwise", () => {
    expect(readNumberOrExpression("5000")).toBe(5000);
    expect(readNumberOrExpression("inputs.delayMs")).toBe("inputs.delayMs");
    expect(readNumberOrExpression("")).toBeUndefined();
  });
});

describe("the schema's issues land under their fields", () => {
  it("a missing required field, a bound, a record key and retry's inner fields", () => {
    const issues = blockIssues(
      "workflow",
      {
        id: "w",
        type: "workflow",
        inputs: { email: "" },
        timeoutMs: 0,
        retry: { attempts: 11 },
      },
      blockFields("workflow"),
    );
    const by = Object.fromEntries(issues.map((i) => [i.field, i.message]));
    expect(by.workflowId).toBe("required");
    expect(by.inputs).toBe("email: must not be empty");
    expect(by.timeoutMs).toBe("must be at least 1");
    expect(by["retry.attempts"]).toBe("must be at most 10");
    expect(by["retry.backoffMs"]).toBe("required");
  });

  it("wait's ms speaks with the number branch's words", () => {
    const issues = blockIssues("wait", { id: "w", type: "wait", ms: -1 }, blockFields("wait"));
    expect(issues).toEqual([{ field: "ms", message: "must be at least 0" }]);
  });

  it("unknown keys and the editor's fields are the block's issues", () => {
    const issues = blockIssues(
      "transform",
      { id: "Bad", type: "transform", expression: "1", extra: true },
      blockFields("transform"),
    );
    expect(issues.every((i) => i.field === "")).toBe(true);
    expect(issues.map((i) => i.message).join(" ")).toMatch(/extra/);
    expect(issues.map((i) => i.message).join(" ")).toMatch(/^id: /m);
  });
});
