/**
 * Enrichments end to end, from POST /runs through an in-process worker to the cell and
 * the row, with loopback servers standing in for company-data providers and websites:
 * the provider cascade and its details on the cell, skipped / not_found / error outcomes
 * and the blanking of stale outputs, website_meta on a real page, the enrichment block in
 * a workflow, and the GET /api/enrichments listing.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnrichmentDetails } from "@/enrichments/types";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { enrichmentTableBody } from "../helpers/store-tables";

type Cell = { status: string; outcome?: string | null; error?: string | null };
type Row = { id: string; data: Record<string, unknown>; cells: Record<string, Cell> };
type CellRecord = {
  status: string;
  outcome: string | null;
  error: string | null;
  details: unknown;
};

let ep: Endpoint;
let pages: http.Server;
let pagesUrl = "";
const pageBodies = new Map<string, { status: number; type: string; body: string }>();

/** A workspace of its own per test: company providers are workspace secrets. */
async function workspace(secrets: Record<string, string> = {}): Promise<string> {
  const { key } = await newWorkspace();
  for (const [name, value] of Object.entries(secrets)) {
    const r = await apiClient(key).PUT("/api/secrets/{name}", {
      params: { path: { name } },
      body: { value },
    });
    expect(r.response.status).toBe(200);
  }
  return key;
}

interface Setup {
  enrichmentId: string;
  inputs: Record<string, string>;
  outputs: Record<string, string>;
  data: Record<string, unknown>;
  autoRun?: boolean;
}

/** A table with one enrichment group `g` over text columns, one row, run once and settled. */
async function runEnrichmentGroup(
  key: string,
  s: Setup,
): Promise<{ tableId: string; row: Row; cell: CellRecord }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: enrichmentTableBody("enrich", s),
  });
  if (t.response.status !== 201)
    throw new Error(`table refused: ${JSON.stringify(t.error ?? t.data)}`);
  const tableId = dataOf(t).id;
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: [{ data: s.data }] },
  });
  const rowId = dataOf(rows).rows[0]?.id as string;
  const run = await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  expect(run.response.status).toBe(202);
  const row = await settled(key, tableId, rowId);
  return { tableId, row, cell: await cellRecord(rowId) };
}

async function settled(key: string, tableId: string, rowId: string): Promise<Row> {
  let row: Row | undefined;
  const done = await waitFor(async () => {
    row = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
        params: { path: { id: tableId, rowId } },
      }),
    );
    return ["completed", "error", "cancelled"].includes(row.cells.g?.status ?? "");
  }, 60_000);
  if (!done) throw new Error(`cell never settled: ${JSON.stringify(row)}`);
  return row as Row;
}

/** The row view does not show `details`; the cells table does. */
async function cellRecord(rowId: string): Promise<CellRecord> {
  const [cell] = await queryRows<CellRecord>(
    getDatabase().db,
    sql`select status, outcome, error, details from cells where row_id = ${rowId} and group_id = 'g'`,
  );
  if (!cell) throw new Error("no cell");
  return cell;
}

const statuses = (details: unknown) =>
  (details as EnrichmentDetails).providers.map((p) => `${p.id}:${p.status}`);

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  ep = await startEndpoint();
  pages = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    // Never answers: a server that accepted the connection and stalled.
    if (path === "/hang") return void res.writeHead(200, { "content-type": "text/html" });
    const page = pageBodies.get(path);
    res.writeHead(page?.status ?? 404, { "content-type": page?.type ?? "text/plain" });
    res.end(page?.body ?? "not found");
  });
  await new Promise<void>((r) => pages.listen(0, "127.0.0.1", () => r()));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await ep.close();
  pages.closeAllConnections();
  await new Promise<void>((r) => pages.close(() => r()));
});

describe("GET /api/enrichments", () => {
  it("lists every built-in with its cost and its input and output schemas", async () => {
    const key = await workspace();
    const r = await apiClient(key).GET("/api/enrichments");
    expect(r.response.status).toBe(200);
    expect(dataOf(r).enrichments.map((e) => e.id)).toEqual([
      "email_domain",
      "phone_normalize",
      "website_meta",
      "company_lookup",
    ]);
    const phone = dataOf(r).enrichments.find((e) => e.id === "phone_normalize");
    expect(phone).toMatchObject({
      name: expect.any(String),
      description: expect.any(String),
      cost: expect.any(Number),
      inputs: [
        { id: "phone", type: "text", required: true },
        { id: "country", type: "text", required: false },
      ],
    });
    expect(phone?.outputs).toContainEqual(expect.objectContaining({ id: "e164", type: "text" }));
  });

  it("needs an API key", async () => {
    expect((await apiClient().GET("/api/enrichments")).response.status).toBe(401);
  });
});

describe("enrichment groups", () => {
  it("an offline enrichment fills its outputs and records its provider on the cell", async () => {
    const key = await workspace();
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "email_domain",
      inputs: { email: "email" },
      outputs: { dom: "domain", free: "free_mail" },
      data: { email: "ada@Acme.io" },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "ok" });
    expect(row.data).toMatchObject({ dom: "acme.io", free: false });
    expect(cell.details).toMatchObject({ enrichmentId: "email_domain", costCredits: 0 });
    expect(statuses(cell.details)).toEqual(["builtin:found"]);
  });

  it("providers are tried in order: the first finds nothing, the second answers, with its key", async () => {
    ep.on("/c1/none", async () => ({ status: 404, body: { error: "unknown domain" } }));
    ep.on("/c1/acme", async (hit) => ({
      status: 200,
      body: {
        data: { name: `Acme (${hit.query.get("domain")})`, industry: "Tools", employees: 42 },
      },
    }));
    const key = await workspace({
      COMPANY_LOOKUP_URL_1: `${ep.url}/c1/none`,
      COMPANY_LOOKUP_URL_2: `${ep.url}/c1/acme`,
      COMPANY_LOOKUP_KEY_2: "key-two-secret",
    });
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "company_lookup",
      inputs: { domain: "site" },
      outputs: { company: "name", industry: "industry", size: "size", country: "country" },
      data: { site: "https://www.acme.com/about", country: "stale" },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "ok" });
    // A partial answer blanks the outputs it did not fill.
    expect(row.data).toMatchObject({ company: "Acme (acme.com)", industry: "Tools", size: "42" });
    expect(row.data.country ?? null).toBeNull();
    expect(statuses(cell.details)).toEqual(["provider_1:empty", "provider_2:found"]);
    const found = (cell.details as EnrichmentDetails).providers[1];
    expect(found?.costCredits).toBe(5);
    expect(found?.ms).toEqual(expect.any(Number));
    const first = ep.hitsOf("/c1/none")[0];
    const second = ep.hitsOf("/c1/acme")[0];
    expect(first && second && first.at <= second.at).toBe(true);
    expect(first?.headers.authorization).toBeUndefined();
    expect(second?.headers.authorization).toBe("Bearer key-two-secret");
    expect(JSON.stringify(cell.details)).not.toContain("key-two-secret");
  });

  it("a missing required input completes as skipped, calls no provider and blanks stale outputs", async () => {
    ep.on("/c2", async () => ({ status: 200, body: { name: "never" } }));
    const key = await workspace({ COMPANY_LOOKUP_URL_1: `${ep.url}/c2` });
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "company_lookup",
      inputs: { domain: "site" },
      outputs: { company: "name" },
      data: { site: "", company: "Stale Inc" },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "skipped" });
    expect(row.data.company ?? null).toBeNull();
    expect(ep.hitsOf("/c2")).toHaveLength(0);
    expect(cell.details).toMatchObject({ missingInputs: ["domain"], costCredits: 0 });
  });

  it("every provider finding nothing is completed as not_found, costs nothing and is not re-run", async () => {
    ep.on("/c3/a", async () => ({ status: 404 }));
    ep.on("/c3/b", async () => ({ status: 200, body: {} }));
    const key = await workspace({
      COMPANY_LOOKUP_URL_1: `${ep.url}/c3/a`,
      COMPANY_LOOKUP_URL_2: `${ep.url}/c3/b`,
    });
    const { tableId, row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "company_lookup",
      inputs: { domain: "site" },
      outputs: { company: "name" },
      data: { site: "nobody.example", company: "Stale Inc" },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "not_found", error: null });
    expect(row.data.company ?? null).toBeNull();
    expect(statuses(cell.details)).toEqual(["provider_1:empty", "provider_2:empty"]);
    expect((cell.details as EnrichmentDetails).costCredits).toBe(0);
    // Auto-run goes through mode `new`; neither it nor `incomplete` touches a completed cell.
    for (const mode of ["new", "incomplete"] as const) {
      const again = await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode },
      });
      expect(startedRun(again).stamped).toBe(0);
    }
    expect(ep.hitsOf("/c3/a")).toHaveLength(1);
  });

  it("every provider failing is an error that gives each provider's reason", async () => {
    ep.on("/c4/a", async () => ({ status: 401, body: { error: "bad key key-four-secret" } }));
    ep.on("/c4/b", async () => ({ status: 503, body: { error: "down" } }));
    const key = await workspace({
      COMPANY_LOOKUP_URL_1: `${ep.url}/c4/a`,
      COMPANY_LOOKUP_KEY_1: "key-four-secret",
      COMPANY_LOOKUP_URL_2: `${ep.url}/c4/b`,
    });
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "company_lookup",
      inputs: { domain: "site" },
      outputs: { company: "name" },
      data: { site: "acme.com" },
    });
    expect(row.cells.g?.status).toBe("error");
    expect(cell.error).toContain("provider_1: HTTP 401");
    expect(cell.error).toContain("provider_2: HTTP 503");
    expect(cell.error).not.toContain("key-four-secret");
    expect(statuses(cell.details)).toEqual(["provider_1:error", "provider_2:error"]);
  });

  it("a provider's 429 with Retry-After holds this workspace's next call to it that long", async () => {
    ep.on("/c5", async (_hit, nth) =>
      nth === 1
        ? { status: 429, body: { error: "slow down" }, headers: { "retry-after": "4" } }
        : { status: 200, body: { name: "Acme" } },
    );
    const key = await workspace({ COMPANY_LOOKUP_URL_1: `${ep.url}/c5` });
    const setup = {
      enrichmentId: "company_lookup",
      inputs: { domain: "site" },
      outputs: { company: "name" },
      data: { site: "acme.com" },
    };
    const refused = await runEnrichmentGroup(key, setup);
    expect(refused.cell.error).toContain("provider_1: HTTP 429");
    // The next row, run at once: its call waits out the provider's 4 s instead of being
    // spent on another refusal, then completes.
    const next = await runEnrichmentGroup(key, setup);
    expect(next.cell).toMatchObject({ status: "completed", outcome: "ok" });
    const [first, second] = ep.hitsOf("/c5");
    expect(ep.hitsOf("/c5")).toHaveLength(2);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(4_000);
  });

  it("website_meta reads a real page's title, description and Open Graph fields", async () => {
    pageBodies.set("/home", {
      status: 200,
      type: "text/html; charset=utf-8",
      body: `<html><head><title>Acme – Home</title>
        <meta name="description" content="Tools for everyone">
        <meta property="og:image" content="/card.png"></head><body>hi</body></html>`,
    });
    const key = await workspace();
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "website_meta",
      inputs: { url: "site" },
      outputs: { title: "title", desc: "description", image: "og_image", og: "og_title" },
      data: { site: `${pagesUrl}/home`, og: "stale" },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "ok" });
    expect(row.data).toMatchObject({
      title: "Acme – Home",
      desc: "Tools for everyone",
      image: `${pagesUrl}/card.png`,
    });
    expect(row.data.og ?? null).toBeNull();
  });

  it("website_meta reads at most 1 MiB of a page and still parses its start", async () => {
    pageBodies.set("/huge", {
      status: 200,
      type: "text/html",
      body: `<html><head><title>Huge</title></head><body>${"x".repeat(3 * 1024 * 1024)}</body>`,
    });
    const key = await workspace();
    const { row, cell } = await runEnrichmentGroup(key, {
      enrichmentId: "website_meta",
      inputs: { url: "site" },
      outputs: { title: "title" },
      data: { site: `${pagesUrl}/huge` },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "ok" });
    expect(row.data.title).toBe("Huge");
  });

  it("website_meta gives up on a page that does not answer within 5 s", async () => {
    const key = await workspace();
    const { cell } = await runEnrichmentGroup(key, {
      enrichmentId: "website_meta",
      inputs: { url: "site" },
      outputs: { title: "title" },
      data: { site: `${pagesUrl}/hang` },
    });
    expect(cell.status).toBe("error");
    expect(cell.error).toContain("http_get: timed out after 5 s");
  });

  it("website_meta on a missing page is not_found, not an error", async () => {
    const key = await workspace();
    const { cell } = await runEnrichmentGroup(key, {
      enrichmentId: "website_meta",
      inputs: { url: "site" },
      outputs: { title: "title" },
      data: { site: `${pagesUrl}/missing` },
    });
    expect(cell).toMatchObject({ status: "completed", outcome: "not_found" });
  });
});

describe("the enrichment block", () => {
  it("outputs the enrichment's outputs object, all null when nothing was found", async () => {
    const key = await workspace();
    const wf = await apiClient(key).POST("/api/workflows", {
      body: {
        name: "w",
        definition: {
          inputs: [{ name: "email", required: true }],
          blocks: [
            {
              id: "e",
              type: "enrichment",
              enrichmentId: "email_domain",
              inputs: { email: "inputs.email" },
              next: "p",
            },
            {
              id: "p",
              type: "enrichment",
              enrichmentId: "phone_normalize",
              inputs: { phone: "'not a number'" },
            },
          ],
        },
      },
    });
    expect(wf.response.status).toBe(201);
    const t = await apiClient(key).POST("/api/tables", {
      body: {
        name: "block",
        columns: [
          { id: "email", name: "email", type: "text" },
          { id: "dom", name: "dom", type: "json" },
          { id: "phone", name: "phone", type: "json" },
        ],
        groups: [
          {
            id: "g",
            name: "G",
            kind: "workflow",
            workflowId: dataOf(wf).id,
            inputs: { email: "email" },
            outputs: [
              { columnId: "dom", from: "e.domain" },
              { columnId: "phone", from: "p" },
            ],
          },
        ],
      },
    });
    expect(t.response.status).toBe(201);
    const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: dataOf(t).id } },
      body: { rows: [{ data: { email: "x@gmail.com" } }] },
    });
    const rowId = dataOf(rows).rows[0]?.id as string;
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: dataOf(t).id } },
      body: { mode: "all" },
    });
    const row = await settled(key, dataOf(t).id, rowId);
    expect(row.cells.g).toMatchObject({ status: "completed" });
    expect(row.data.dom).toBe("gmail.com");
    expect(row.data.phone).toEqual({
      e164: null,
      country: null,
      line_type: null,
      national: null,
      international: null,
    });
  });
});
