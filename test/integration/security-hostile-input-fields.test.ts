import { describe, it } from "vitest";
import { apiClient, dataOf } from "../helpers/api";
import {
  accepts,
  baseTable,
  createdId,
  firstRow,
  get,
  key,
  post,
  type RowView,
  setUpHostileWorkspace,
  type TableView,
  tableOf,
  type WorkflowView,
  workflowId,
} from "../helpers/hostile-input";
import {
  clientIdOk,
  entries,
  nameOk,
  overLimit,
  parses,
  storable,
  textOk,
} from "../helpers/hostile-strings";
import type { ApiResponse } from "../helpers/raw-api";

// This file's own database, with the workspace, workflow and base table the tests write into.
setUpHostileWorkspace("hostile");

describe("names and ids: kept exactly as sent, or refused with 400", () => {
  it("table names (create and rename)", async () => {
    for (const [label, s] of entries) {
      const body = { name: s };
      await accepts(
        `create ${label}`,
        nameOk(s),
        post("POST", "/api/tables", body),
        async (res) => (await tableOf(res)).name,
        s,
        overLimit(body) ? [413] : [400],
      );
      await accepts(
        `rename ${label}`,
        nameOk(s),
        post("PATCH", `/api/tables/${baseTable}`, body),
        async () => (await get<TableView>(`/api/tables/${baseTable}`)).name,
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });

  it("column names, column ids and select options", async () => {
    for (const [label, s] of entries) {
      const limit = (body: unknown) => (overLimit(body) ? [413] : [400]);
      const named = { name: "c", columns: [{ id: "c", name: s, type: "text" }] };
      await accepts(
        `column name ${label}`,
        // A column's name is a key of `row` in expressions: `__proto__` cannot be one.
        nameOk(s) && s !== "__proto__",
        post("POST", "/api/tables", named),
        async (res) => (await tableOf(res)).columns[0]?.name,
        s,
        limit(named),
      );
      const ided = { name: "c", columns: [{ id: s, name: "C", type: "text" }] };
      await accepts(
        `column id ${label}`,
        clientIdOk(s),
        post("POST", "/api/tables", ided),
        async (res) => (await tableOf(res)).columns[0]?.id,
        s,
        limit(ided),
      );
      const option = { name: "c", columns: [{ id: "c", name: "C", type: "select", options: [s] }] };
      await accepts(
        `select option ${label}`,
        storable(s) && s.length >= 1 && s.length <= 200,
        post("POST", "/api/tables", option),
        async (res) => (await tableOf(res)).columns[0]?.options,
        [s],
        limit(option),
      );
    }
  });

  it("group names and group ids", async () => {
    const group = (over: Record<string, unknown>) => ({
      name: "g",
      columns: [{ id: "out", name: "Out", type: "text" }],
      groups: [
        {
          id: "g",
          name: "G",
          kind: "workflow",
          workflowId,
          outputs: [{ columnId: "out", from: "done" }],
          ...over,
        },
      ],
    });
    for (const [label, s] of entries) {
      const named = group({ name: s });
      await accepts(
        `group name ${label}`,
        nameOk(s),
        post("POST", "/api/tables", named),
        async (res) => (await tableOf(res)).groups[0]?.name,
        s,
        overLimit(named) ? [413] : [400],
      );
      const ided = group({ id: s });
      await accepts(
        `group id ${label}`,
        clientIdOk(s),
        post("POST", "/api/tables", ided),
        async (res) => (await tableOf(res)).groups[0]?.id,
        s,
        overLimit(ided) ? [413] : [400],
      );
    }
  });

  it("workflow names, block names, expressions and http block templates", async () => {
    const definition = (block: Record<string, unknown>) => ({ blocks: [block] });
    const create = (name: string, block: Record<string, unknown>) => ({
      name,
      definition: definition(block),
    });
    const blockOf = async (res: ApiResponse) =>
      (await get<WorkflowView>(`/api/workflows/${createdId(res)}`)).definition.blocks[0];
    const transform = { id: "a", type: "transform", expression: "1" };
    for (const [label, s] of entries) {
      const limit = (body: unknown) => (overLimit(body) ? [413] : [400]);
      const named = create(s, transform);
      await accepts(
        `workflow name ${label}`,
        nameOk(s),
        post("POST", "/api/workflows", named),
        async (res) => (await get<WorkflowView>(`/api/workflows/${createdId(res)}`)).name,
        s,
        limit(named),
      );
      const blockName = create("w", { ...transform, name: s });
      await accepts(
        `block name ${label}`,
        storable(s) && s.length <= 200,
        post("POST", "/api/workflows", blockName),
        async (res) => (await blockOf(res))?.name,
        s,
        limit(blockName),
      );
      const expression = create("w", { ...transform, expression: s });
      await accepts(
        `expression ${label}`,
        storable(s) && s.length >= 1 && s.length <= 20_000 && parses(s),
        post("POST", "/api/workflows", expression),
        async (res) => (await blockOf(res))?.expression,
        s,
        limit(expression),
      );
      const http = {
        id: "h",
        type: "http",
        method: "POST",
        url: "https://api.example.test/{{ inputs.x }}",
        headers: { "x-value": s },
        body: { text: s, list: [s, { nested: s }], [s]: 1 },
      };
      const httpBody = create("w", http);
      await accepts(
        `http block ${label}`,
        storable(s) && s.length <= 100_000 && s !== "__proto__",
        post("POST", "/api/workflows", httpBody),
        async (res) => {
          const b = await blockOf(res);
          return { headers: b?.headers, body: b?.body };
        },
        { headers: http.headers, body: http.body },
        limit(httpBody),
      );
    }
  });
});

describe("row values: kept exactly as sent, or refused with 400", () => {
  it("text values, inserted and edited", async () => {
    const row = dataOf(
      await apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: baseTable } },
        body: { rows: [{ data: {} }] },
      }),
    ).rows[0]?.id;
    for (const [label, s] of entries) {
      const insert = { rows: [{ data: { t: s } }] };
      await accepts(
        `insert ${label}`,
        textOk(s),
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async (res) => (await firstRow(res)).t,
        s,
        overLimit(insert) ? [413] : [400],
      );
      const patch = { data: { t: s } };
      await accepts(
        `edit ${label}`,
        textOk(s),
        post("PATCH", `/api/tables/${baseTable}/rows/${row}`, patch),
        async () => (await get<RowView>(`/api/tables/${baseTable}/rows/${row}`)).data.t,
        s,
        overLimit(patch) ? [413] : [400],
      );
    }
  });

  it("json values: strings, object keys and arrays", async () => {
    for (const [label, s] of entries) {
      const value = { [s]: s, list: [s, { deeper: [s] }] };
      const insert = { rows: [{ data: { j: value } }] };
      await accepts(
        `json ${label}`,
        storable(s) && s !== "__proto__",
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async (res) => (await firstRow(res)).j,
        value,
        overLimit(insert) ? [413] : [400],
      );
    }
  });

  it("row data keys that are not column ids are refused", async () => {
    for (const [label, s] of entries) {
      const insert = { rows: [{ data: { [s]: "x" } }] };
      await accepts(
        `data key ${label}`,
        false,
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async () => null,
        null,
        overLimit(insert) ? [413] : [400],
      );
    }
  });
});
