/**
 * The OpenAPI document (API.md "Describing the API"): it covers every route the server
 * serves and nothing else, is valid OpenAPI 3.1, is served without a key with a reference
 * page beside it, and the committed copies (docs/openapi.json, the client's types) are
 * what the code generates. That every answer matches it is checked by the integration
 * helper on each call of the suite (test/helpers/openapi-responses.ts).
 */
import fs from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect, it } from "vitest";
import { generatedFiles } from "@/client/generated-files";
import { openApiDocument } from "@/http/openapi/document";
import { apiClient, dataOf, listRoutes } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { answerMismatch, documentPath } from "../helpers/openapi-responses";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

type Operation = {
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};

function documentedOperations(): { key: string; op: Operation }[] {
  const out: { key: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(openApiDocument().paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (op) out.push({ key: `${method.toUpperCase()} ${path}`, op });
    }
  }
  return out;
}

let key: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

describe("the document covers the API", () => {
  it("every route file and method under src/app/api is in the document (the catch-all 404 excepted)", async () => {
    const served = (await listRoutes()).flatMap((r) =>
      r.methods.map((m) => `${m} ${documentPath(r.template)}`),
    );
    expect(served.length).toBeGreaterThan(30);
    const documented = new Set(documentedOperations().map((o) => o.key));
    expect(
      served.filter((s) => !documented.has(s)),
      "routes missing from the OpenAPI document (src/http/openapi/*-routes.ts)",
    ).toEqual([]);
  });

  it("the document describes no operation that no route file serves", async () => {
    const served = new Set(
      (await listRoutes()).flatMap((r) => r.methods.map((m) => `${m} ${documentPath(r.template)}`)),
    );
    const phantom = documentedOperations().filter((o) => !served.has(o.key));
    expect(phantom.map((o) => o.key)).toEqual([]);
  });

  it("every operation answers its errors in the API error shape, and keyed ones list 401", () => {
    const errorRef = { $ref: "#/components/schemas/ApiError" };
    for (const { key: name, op } of documentedOperations()) {
      const responses = op.responses ?? {};
      expect(responses["500"]?.content?.["application/json"]?.schema, name).toEqual(errorRef);
      const keyed = (op.security ?? []).some((s) => Object.hasOwn(s as object, "apiKey"));
      if (keyed)
        expect(responses["401"]?.content?.["application/json"]?.schema, name).toEqual(errorRef);
      expect(op.operationId, name).toMatch(/^[a-zA-Z]+$/);
    }
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    // As a client would read it: the JSON text, parsed.
    const spec: Record<string, unknown> = JSON.parse(JSON.stringify(openApiDocument()));
    const result = await validator.validate(spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("describes a structured query value as one JSON parameter, and the event stream's items", () => {
    const doc = JSON.parse(JSON.stringify(openApiDocument()));
    const where = doc.paths["/api/tables/{id}/rows"].get.parameters.find(
      (p: { name: string }) => p.name === "where",
    );
    expect(where.schema).toBeUndefined();
    expect(where.content["application/json"].schema.items.$ref).toBe(
      "#/components/schemas/WhereCondition",
    );
    const stream =
      doc.paths["/api/tables/{id}/events"].get.responses["200"].content["text/event-stream"];
    expect(stream["x-itemSchema"].$ref).toBe("#/components/schemas/TableEvent");
    const kinds = doc.components.schemas.TableEvent.oneOf.map(
      (e: { properties: { event: { enum: string[] } } }) => e.properties.event.enum[0],
    );
    expect(kinds.sort()).toEqual([
      "cell",
      "dispatch",
      "limit",
      "progress",
      "reset",
      "rows",
      "schema",
    ]);
  });

  it("a named enum never admits null: where a field may be null, that field says so", () => {
    // zod-to-openapi makes a named schema nullable everywhere once one use is `.nullable()`.
    const schemas = openApiDocument().components?.schemas ?? {};
    const nullable = Object.entries(schemas)
      .filter(([, s]) => "enum" in s && (s.enum ?? []).includes(null))
      .map(([name]) => name);
    expect(nullable).toEqual([]);
    const cell = JSON.parse(JSON.stringify(schemas.CellView));
    expect(cell.properties.outcome.anyOf).toEqual([
      { $ref: "#/components/schemas/CellOutcome" },
      { type: "null" },
    ]);
  });

  it("answers carry the fields the server fills with defaults; requests may leave them out", () => {
    const schemas = JSON.parse(JSON.stringify(openApiDocument().components?.schemas ?? {}));
    expect(schemas.WorkflowGroup.required).not.toContain("autoRun");
    expect(schemas.WorkflowGroupView.required).toEqual(
      expect.arrayContaining(["inputs", "outputs", "dependsOn", "autoRun", "version"]),
    );
    expect(schemas.TableView.properties.groups.items.$ref).toBe("#/components/schemas/GroupView");
    expect(schemas.CreateTableRequest.properties.groups.items.$ref).toBe(
      "#/components/schemas/Group",
    );
  });
});

describe("the response check", () => {
  it("refuses a status the document does not list, and a body that does not fit", () => {
    const base = {
      method: "GET",
      template: "/api/tables/[id]",
      url: "/api/tables/t1",
      contentType: "application/json",
    };
    const teapot = answerMismatch({ ...base, status: 418, body: {}, text: "{}" });
    expect(teapot).toContain("does not list");
    const wrong = { id: "t1", name: 7 };
    const misfit = answerMismatch({
      ...base,
      status: 200,
      body: wrong,
      text: JSON.stringify(wrong),
    });
    expect(misfit).toContain("does not match");
    const csv = answerMismatch({
      ...base,
      template: "/api/tables/[id]/export",
      status: 200,
      contentType: "application/json",
      body: {},
      text: "{}",
    });
    expect(csv).toContain("text/csv");
  });
});

describe("describing the API over HTTP", () => {
  it("GET /api/openapi.json needs no key and serves the document", async () => {
    const res = await apiClient().GET("/api/openapi.json");
    expect(res.response.status).toBe(200);
    expect(dataOf(res).openapi).toBe("3.1.0");
    expect(dataOf(res)).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it("GET /api/docs needs no key, shows every operation, and loads nothing from elsewhere", async () => {
    const res = await apiClient().GET("/api/docs", { parseAs: "text" });
    expect(res.response.status).toBe(200);
    const page = dataOf(res);
    expect(res.response.headers.get("content-type")).toContain("text/html");
    for (const { op } of documentedOperations()) expect(page).toContain(`id="${op.operationId}"`);
    expect(page).not.toMatch(/<script|<link|\bsrc=|@import|url\(/i);
    expect(page).not.toMatch(/href="(?!#|\/api\/openapi\.json")/);
    expect(res.response.headers.get("content-security-policy")).toContain("default-src 'none'");
  });
});

describe("the typed client", () => {
  it("calls the API with typed paths and bodies, and gives errors in the API's shape", async () => {
    const api = apiClient(key);
    const created = await api.POST("/api/tables", {
      body: { name: "Typed", columns: [{ id: "n", name: "N", type: "number" }] },
    });
    expect(created.response.status).toBe(201);
    const id = created.data?.id ?? "";
    const rows = await api.POST("/api/tables/{id}/rows", {
      params: { path: { id } },
      body: { rows: [{ data: { n: 1 } }, { data: { n: 2 } }] },
    });
    expect(rows.data?.rows.map((r) => r.data.n)).toEqual([1, 2]);
    const page = await api.GET("/api/tables/{id}/rows", {
      params: { path: { id }, query: { limit: 1 } },
    });
    expect(page.data?.rows).toHaveLength(1);
    expect(page.data?.nextCursor).toEqual(expect.any(String));
    const refused = await api.POST("/api/tables/{id}/rows", {
      params: { path: { id } },
      body: { rows: [{ data: { n: "not a number" } }] },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.code).toBe("validation_failed");
    const anonymous = await apiClient().GET("/api/tables");
    expect(anonymous.error?.error.code).toBe("unauthorized");
  });
});

describe("generated files", () => {
  it("the committed document and client types are what `npm run api:generate` writes", async () => {
    for (const { file, text } of await generatedFiles()) {
      const committed = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      expect(committed === text, `${file} is stale: run \`npm run api:generate\``).toBe(true);
    }
  });
});
