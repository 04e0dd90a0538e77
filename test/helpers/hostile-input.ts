/**
 * The workspace, base table and workflow the hostile-input tests write into, and the checks
 * they share: accepted exactly as sent, or refused with nothing written.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, expect } from "vitest";
import { closeBackend } from "@/backends/instance";
import { ApiError } from "@/contracts/common";
import { useTestDatabase } from "./db";
import { dbFingerprint } from "./fingerprint";
import { newWorkspace } from "./fixtures";
import { type ApiResponse, type CallOptions, call } from "./raw-api";

/**
 * Set by setUpHostileWorkspace before the tests run (module bindings are live, so importers
 * see the values): the workspace's API key, a workflow for groups to run, and a table with
 * a text column `t` and a json column `j`.
 */
export let key: string;
export let workflowId: string;
export let baseTable: string;
/** Set in the environment for the tests, so the admin route can be called. */
export const ADMIN_TOKEN = "hostile-input-admin-token";

/**
 * A database of the calling test file's own, with a workspace named `workspaceName`, a
 * workflow and a base table.
 */
export function setUpHostileWorkspace(workspaceName: string): void {
  beforeAll(async () => {
    await useTestDatabase();
    process.env.CELLFLOW_ADMIN_TOKEN = ADMIN_TOKEN;
    key = (await newWorkspace(workspaceName)).key;
    const wf = await call<{ id: string }>("POST", "/api/workflows", {
      key,
      body: {
        name: "w",
        definition: { blocks: [{ id: "done", type: "transform", expression: "'ok'" }] },
      },
    });
    workflowId = wf.body.id;
    const t = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: {
        name: "base",
        columns: [
          { id: "t", name: "T", type: "text" },
          { id: "j", name: "J", type: "json" },
        ],
      },
    });
    baseTable = t.body.id;
  });

  afterAll(async () => {
    delete process.env.CELLFLOW_ADMIN_TOKEN;
    await closeBackend();
  });
}

/**
 * A request expected to be accepted (then `readBack` must give exactly `sent`) or refused
 * (400 in the error shape, or 413 for a body over the limit) with nothing written.
 * `refusals` are the statuses a refusal may have; `[413]` says the body is over the limit.
 */
export async function accepts(
  label: string,
  accept: boolean,
  send: () => Promise<ApiResponse>,
  readBack: (res: ApiResponse) => Promise<unknown>,
  sent: unknown,
  refusals: number[] = [400],
): Promise<void> {
  // A body over the limit is refused whatever it holds.
  const acceptable = accept && !refusals.includes(413);
  const before = await dbFingerprint();
  const res = await send();
  const brief = JSON.stringify(res.body).slice(0, 300);
  expect(res.status, `${label}: never a 500 (${brief})`).toBeLessThan(500);
  if (acceptable) {
    expect(res.status, `${label} should be accepted: ${brief}`).toBeLessThan(300);
    const back = await readBack(res);
    // Exact: Object.is on strings, deep equality with own keys for objects.
    expect(back, `${label} came back altered`).toStrictEqual(sent);
    return;
  }
  expect(refusals, `${label} should be refused: got ${res.status} ${brief}`).toContain(res.status);
  const error = ApiError.parse(res.body).error;
  if (res.status === 400) expect(error.issues?.length, label).toBeGreaterThan(0);
  expect(await dbFingerprint(), `${label} wrote something`).toBe(before);
}

export function post(method: string, path: string, body: unknown, extra: CallOptions = {}) {
  return () => call(method, path, { key, body, ...extra });
}

export async function get<T>(path: string): Promise<T> {
  const res = await call<T>("GET", path, { key });
  expect(res.status, path).toBe(200);
  return res.body;
}

export type TableView = {
  id: string;
  name: string;
  columns: { id: string; name: string; options?: string[] }[];
  groups: { id: string; name: string }[];
};
export type RowView = { id: string; data: Record<string, unknown> };
export type WorkflowView = { definition: { blocks: Record<string, unknown>[] }; name: string };

export const createdId = (res: ApiResponse) => (res.body as { id: string }).id;
export const tableOf = (res: ApiResponse) => get<TableView>(`/api/tables/${createdId(res)}`);
export const firstRow = async (res: ApiResponse) => {
  const id = (res.body as { rows: { id: string }[] }).rows[0]?.id;
  return (await get<RowView>(`/api/tables/${baseTable}/rows/${id}`)).data;
};

export const now = () => Math.floor(Date.now() / 1000);
export const signature = (secret: string, body: Uint8Array) => {
  const t = now();
  const mac = createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex");
  return `t=${t},v1=${mac}`;
};

/** `levels` arrays inside each other around 1. */
export const nested = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

export async function expectRefusedRaw(
  what: string,
  send: () => Promise<ApiResponse>,
  message: RegExp,
): Promise<void> {
  const before = await dbFingerprint();
  const res = await send();
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
  const error = ApiError.parse(res.body).error;
  expect(error.issues?.length, what).toBeGreaterThan(0);
  expect(`${error.message} ${error.issues?.map((i) => i.message).join(" ")}`, what).toMatch(
    message,
  );
  expect(await dbFingerprint(), `${what} wrote something`).toBe(before);
}
