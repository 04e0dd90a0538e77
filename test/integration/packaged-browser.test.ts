/**
 * The Chromium packaged in @sparticuz/chromium really drives a page under playwright-core
 * headless with the flags the UI tests use: it is the fallback on machines without a
 * system Chromium, so a broken packaged build must fail here even where one exists.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSER_ARGS, browserLookup, packagedBrowser } from "../provision/browser";

const page = `<!doctype html><title>packaged</title><p id="out">static</p>
<script>document.getElementById("out").textContent = "scripted " + (6 * 7);</script>`;

const server = http.createServer((_req, res) => {
  res.setHeader("content-type", "text/html");
  res.end(page);
});
let url = "";
let browser: Browser | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("the packaged Chromium", () => {
  it("loads a loopback page and runs its script, in two separate contexts", async () => {
    const executablePath = await packagedBrowser(browserLookup().cacheDir);
    if (!executablePath.ok) throw new Error(executablePath.reason);
    browser = await chromium.launch({ executablePath: executablePath.value, args: BROWSER_ARGS });
    for (let i = 0; i < 2; i++) {
      const context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(url);
      expect(await tab.title()).toBe("packaged");
      expect(await tab.textContent("#out")).toBe("scripted 42");
      await context.close();
    }
  }, 120_000);
});
