/**
 * A browser test's setting: the real `npm start` on a data directory of the test's own,
 * headless Chromium with one page, and the small calls every browser test makes (the API
 * with the printed key, a workflow, the cell states the grid shows). Browser test files
 * share these instead of each writing its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { BROWSER_ARGS, findBrowser } from "../provision/browser";
import { type Started, startCellflow, stopCellflow } from "./npm-start";
import { freePort } from "./processes";

export interface BrowserApp {
  app: Started;
  browser: Browser;
  page: Page;
  dataDir: string;
}

export async function launchBrowser(): Promise<Browser> {
  const found = await findBrowser();
  if (!found.ok) throw new Error(found.reason);
  return chromium.launch({ executablePath: found.value.executablePath, args: BROWSER_ARGS });
}

/** `npm start` on a fresh data directory, and a browser page signed in to it. */
export async function openBrowserApp(prefix: string): Promise<BrowserApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dataDir, 0o777);
  const app = await startCellflow(dataDir, await freePort(), await freePort());
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(app.signinUrl);
  await page.waitForURL(/\/tables$/);
  return { app, browser, page, dataDir };
}

export async function closeBrowserApp(s: BrowserApp | undefined): Promise<void> {
  if (!s) return;
  await s.browser.close();
  await stopCellflow(s.dataDir, s.app);
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}

/** The API as a client with the printed key calls it. */
export async function apiCall<T = Record<string, unknown>>(
  app: Started,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${app.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${app.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

export async function createWorkflow(
  app: Started,
  name: string,
  definition: unknown,
): Promise<string> {
  const r = await apiCall<{ id: string }>(app, "POST", "/api/workflows", { name, definition });
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
