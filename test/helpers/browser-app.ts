/**
 * The setup of a browser test file: the real `npm start` on a data directory and ports
 * of its own, and headless Chromium with one page, started before the file's tests and
 * stopped (the data directory removed) after them. `api` calls the running app with its
 * key; a test that restarts the server assigns the new one to `app`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { BROWSER_ARGS, findBrowser } from "../provision/browser";
import { type Started, startCellflow, stopCellflow } from "./npm-start";
import { freePort } from "./processes";

export interface ApiAnswer<T> {
  status: number;
  body: T;
}

export class BrowserApp {
  app!: Started;
  browser!: Browser;
  page!: Page;

  constructor(readonly dataDir: string) {}

  api = async <T = Record<string, unknown>>(
    method: string,
    p: string,
    body?: unknown,
  ): Promise<ApiAnswer<T>> => {
    const res = await fetch(`${this.app.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${this.app.key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  };
}

/** Registers the file's beforeAll/afterAll (call it at the top of the file). */
export function setUpBrowserApp(): BrowserApp {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-ui-"));
  fs.chmodSync(dataDir, 0o777);
  const ui = new BrowserApp(dataDir);
  beforeAll(async () => {
    ui.app = await startCellflow(dataDir, await freePort(), await freePort());
    const found = await findBrowser();
    if (!found.ok) throw new Error(found.reason);
    ui.browser = await chromium.launch({
      executablePath: found.value.executablePath,
      args: BROWSER_ARGS,
    });
    ui.page = await ui.browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 240_000);
  afterAll(async () => {
    await ui.browser?.close();
    if (ui.app) await stopCellflow(dataDir, ui.app);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);
  return ui;
}
