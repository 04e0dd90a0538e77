/**
 * The browser tests' shared setup: a real `npm start` on a data directory of the file's
 * own, a headless Chromium with one page, both stopped (and the directory removed) when
 * the file ends; plus the small API and grid reads the tests make. A test that restarts
 * the server puts the new one in `app`, so the file's end stops that one.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { BROWSER_ARGS, findBrowser } from "../provision/browser";
import { type Started, startCellflow, stopCellflow } from "./npm-start";
import { freePort } from "./processes";

export interface UiSession {
  readonly dataDir: string;
  app: Started;
  browser: Browser;
  page: Page;
}

export async function launchBrowser(): Promise<Browser> {
  const found = await findBrowser();
  if (!found.ok) throw new Error(found.reason);
  return chromium.launch({ executablePath: found.value.executablePath, args: BROWSER_ARGS });
}

/** Registers the file's setup and teardown; the session's fields are set once it ran. */
export function uiSessionOfFile(prefix: string): UiSession {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dataDir, 0o777);
  const session = { dataDir } as UiSession;
  beforeAll(async () => {
    session.app = await startCellflow(dataDir, await freePort(), await freePort());
    session.browser = await launchBrowser();
    session.page = await session.browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 240_000);
  afterAll(async () => {
    await session.browser?.close();
    if (session.app) await stopCellflow(dataDir, session.app);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);
  return session;
}

/** A JSON API call with the session's key. */
export async function uiApi<T = Record<string, unknown>>(
  session: UiSession,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${session.app.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${session.app.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

export async function uiWorkflow(
  session: UiSession,
  name: string,
  definition: unknown,
): Promise<string> {
  const r = await uiApi<{ id: string }>(session, "POST", "/api/workflows", { name, definition });
  expect(r.status).toBe(201);
  return r.body.id;
}

/** Cell states shown in the grid for one group, by status. */
export async function shownStatuses(page: Page, groupId: string): Promise<Record<string, number>> {
  return page.evaluate((g) => {
    const counts: Record<string, number> = {};
    for (const el of document.querySelectorAll(`[data-testid="cell-${g}"] [data-status]`)) {
      const s = el.getAttribute("data-status") ?? "";
      counts[s] = (counts[s] ?? 0) + 1;
    }
    return counts;
  }, groupId);
}

/** The text of one column's cells in the rows the grid renders, top to bottom. */
export async function shownValues(page: Page, columnId: string): Promise<string[]> {
  return page.locator(`[data-testid=grid-row] [data-testid=value-${columnId}]`).allTextContents();
}

/** A workflow that upper-cases its input `v` (block `out`). */
export const UPPER = {
  inputs: [{ name: "v", type: "text" as const, required: true }],
  blocks: [{ id: "out", type: "transform" as const, expression: "$uppercase(inputs.v)" }],
};

/**
 * The body of a table whose group `shout` (workflow `workflowId`, e.g. UPPER's) writes its
 * Name column upper-cased into Loud; `more` columns go between the two.
 */
export function shoutTableBody(
  name: string,
  workflowId: string,
  more: { id: string; name: string; type: "text" | "number" }[] = [],
) {
  return {
    name,
    columns: [
      { id: "name", name: "Name", type: "text" },
      ...more,
      { id: "loud", name: "Loud", type: "text" },
    ],
    groups: [
      {
        id: "shout",
        name: "Shout",
        kind: "workflow",
        workflowId,
        inputs: { v: "name" },
        outputs: [{ columnId: "loud", from: "out" }],
      },
    ],
  };
}
