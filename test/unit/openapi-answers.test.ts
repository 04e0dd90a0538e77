/**
 * Answers read as the server sends them (src/http/openapi/answers.ts): a defaulted field
 * is required in every schema an answer reaches, and a request still may leave it out.
 */
import { describe, expect, it } from "vitest";
import { describeAnswers } from "@/http/openapi/answers";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { "application/json": { schema } } });

function doc(schemas: Record<string, unknown>, request: unknown, answer: unknown) {
  return {
    paths: {
      "/things": {
        post: { requestBody: json(request), responses: { "201": json(answer) } },
      },
    },
    components: { schemas },
  };
}

const group = {
  type: "object",
  properties: { id: { type: "string" }, autoRun: { type: "boolean", default: false } },
  required: ["id"],
};

describe("answers described as sent", () => {
  it("requires a defaulted field in place when only answers use the schema", () => {
    const d = doc(
      { Group: structuredClone(group), In: { type: "string" } },
      ref("In"),
      ref("Group"),
    );
    describeAnswers(d);
    expect(d.components.schemas.Group).toMatchObject({ required: ["id", "autoRun"] });
    expect(Object.keys(d.components.schemas).sort()).toEqual(["Group", "In"]);
  });

  it("gives answers a View copy of a schema requests use too, through every reference to it", () => {
    const d = doc(
      {
        Group: structuredClone(group),
        AnyGroup: {
          oneOf: [ref("Group")],
          discriminator: { propertyName: "kind", mapping: { g: "#/components/schemas/Group" } },
        },
        Create: {
          type: "object",
          properties: { groups: { type: "array", items: ref("AnyGroup") } },
        },
        Table: {
          type: "object",
          properties: { groups: { type: "array", items: ref("AnyGroup") } },
        },
      },
      ref("Create"),
      ref("Table"),
    );
    describeAnswers(d);
    const s = d.components.schemas;
    // The request side is untouched.
    expect(s.Group).toEqual(group);
    expect(s.Create).toMatchObject({ properties: { groups: { items: ref("AnyGroup") } } });
    // The answer side refers to the views, the discriminator's mapping too.
    expect(s.Table).toMatchObject({ properties: { groups: { items: ref("AnyGroupView") } } });
    expect(s.AnyGroupView).toEqual({
      oneOf: [ref("GroupView")],
      discriminator: { propertyName: "kind", mapping: { g: "#/components/schemas/GroupView" } },
    });
    expect(s.GroupView).toMatchObject({ required: ["id", "autoRun"] });
  });

  it("leaves a schema without defaulted fields, and the answers that use it, as they were", () => {
    const plain = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
    const d = doc({ Plain: structuredClone(plain) }, ref("Plain"), ref("Plain"));
    describeAnswers(d);
    expect(d.components.schemas).toEqual({ Plain: plain });
    expect(d.paths["/things"].post.responses["201"]).toEqual(json(ref("Plain")));
  });

  it("refuses to overwrite a schema already named like the view it would add", () => {
    const d = doc(
      { Group: structuredClone(group), GroupView: { type: "string" } },
      ref("Group"),
      ref("Group"),
    );
    expect(() => describeAnswers(d)).toThrow(/GroupView is already a schema/);
  });
});
