import { describe, expect, it } from "vitest";
import { GET as eventsRoute } from "@/app/api/tables/[id]/events/route";
import { ApiError } from "@/contracts/common";
import {
  expectError,
  expectNoLeak,
  FOREIGN_CREDENTIALS,
  intruder,
  makeFixture,
  options,
  type Req,
  sentText,
  setUpAuthzWorkspaces,
  victim,
  workspaceFingerprint,
} from "../helpers/authz-fixtures";
import { keyedCases } from "../helpers/authz-matrix";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

setUpAuthzWorkspaces();

describe("another workspace's resources are a 404 and stay untouched", () => {
  for (const cred of FOREIGN_CREDENTIALS) {
    it(`${cred.name}: resource routes → 404 (never 403), own-scope routes act only on the caller's workspace`, async () => {
      for (const [method, template, spec] of keyedCases()) {
        const what = `${method} ${template} with ${cred.name}`;
        const req = spec.request(victim);
        const headers = cred.headers();
        const before = await dbFingerprint();
        const victimBefore = await workspaceFingerprint(victim.ws.id);
        const res = await call(method, req.path, options(req, headers));
        if (spec.scope === "resource") {
          expectError(res, 404, "not_found", what);
          expect(await dbFingerprint(), `${what} wrote`).toBe(before);
        } else {
          expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(spec.ok);
        }
        expectNoLeak(res, sentText(req, headers));
        expect(await workspaceFingerprint(victim.ws.id), `${what} changed the victim`).toBe(
          victimBefore,
        );
      }
    });
  }

  it("the caller's own table with another workspace's row, run, hook or cell in the path → 404", async () => {
    for (const [method, template, spec] of keyedCases()) {
      if (!spec.mixed) continue;
      const what = `${method} ${template} (own table, victim's ids)`;
      const req = spec.mixed(intruder, victim);
      const headers = { authorization: `Bearer ${intruder.ws.key}` };
      const before = await dbFingerprint();
      const res = await call(method, req.path, options(req, headers));
      expectError(res, 404, "not_found", what);
      expectNoLeak(res, sentText(req, headers));
      expect(await dbFingerprint(), `${what} wrote`).toBe(before);
    }
  });

  it("another workspace's ids inside a body reach nothing of that workspace", async () => {
    const key = intruder.ws.key;
    const victimBefore = await workspaceFingerprint(victim.ws.id);
    const bodies: [string, string, unknown][] = [
      // A group running the victim's workflow: refused as an unknown workflow.
      [
        "POST",
        "/api/tables",
        {
          name: "borrowing",
          columns: [{ id: "out", name: "Out", type: "text" }],
          groups: [
            {
              id: "g",
              name: "G",
              kind: "workflow",
              workflowId: victim.workflowId,
              outputs: [{ columnId: "out", from: "done" }],
            },
          ],
        },
      ],
      ["POST", `/api/tables/${intruder.tableId}/runs`, { mode: "all", rowIds: [victim.rowId] }],
      ["POST", `/api/tables/${intruder.tableId}/runs/cancel`, { dispatchId: victim.dispatchId }],
      ["POST", `/api/tables/${intruder.tableId}/runs/cancel`, { rowIds: [victim.rowId] }],
      ["POST", `/api/tables/${intruder.tableId}/rows/delete`, { rowIds: [victim.rowId] }],
    ];
    for (const [method, path, body] of bodies) {
      const res = await call(method, path, { key, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
      if (res.status >= 400) ApiError.parse(res.body);
      expectNoLeak(res, JSON.stringify([path, body]));
    }
    const table = await call("POST", "/api/tables", { key, body: bodies[0]?.[2] });
    expectError(table, 400, "validation_failed", "a group with another workspace's workflow");
    expect(await workspaceFingerprint(victim.ws.id)).toBe(victimBefore);
  });
});

/** The event stream stays open by design: read its first answer, then hang up. */
async function openEvents(req: Req, key: string): Promise<number> {
  const controller = new AbortController();
  const url = new URL(req.path, "http://cellflow.test");
  const tableId = url.pathname.split("/")[3] ?? "";
  const res = await eventsRoute(
    new Request(url, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    }),
    { params: Promise.resolve({ id: tableId }) },
  );
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  controller.abort();
  await res.body?.cancel();
  return res.status;
}

describe("the matrix's requests are sound: the owner's own key gets what the contract says", () => {
  it("every keyed route answers its owner with the expected status", async () => {
    const owner = await makeFixture(await newWorkspace("owner"), "owner");
    for (const [method, template, spec] of keyedCases()) {
      // Fresh resources for each: deletes and renames must not change what others see.
      const f =
        method === "DELETE" ? await makeFixture(owner.ws, `owner${method.toLowerCase()}`) : owner;
      const req = spec.request(f);
      const status = template.endsWith("/events")
        ? await openEvents(req, f.ws.key)
        : (await call(method, req.path, options(req, { authorization: `Bearer ${f.ws.key}` })))
            .status;
      expect(status, `${method} ${template}`).toBe(spec.ok);
    }
  });
});
