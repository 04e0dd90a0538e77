/**
 * Mouse work on the workflow editor's graph, as a person does it: waiting for a box to
 * stop moving (the graph lays itself out and fits the view after each edit), and
 * dragging from one block's handle to another's to connect them.
 */
import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import { waitFor } from "./processes";

/** A box that has stopped moving (the graph lays itself out and fits the view after an edit). */
export async function settledCentre(target: Locator): Promise<{ x: number; y: number }> {
  let last = "";
  let centre = { x: 0, y: 0 };
  const settled = await waitFor(
    async () => {
      const b = await target.boundingBox();
      if (!b) return false;
      centre = { x: b.x + b.width / 2, y: b.y + b.height / 2 };
      const now = `${Math.round(centre.x)},${Math.round(centre.y)}`;
      const same = now === last;
      last = now;
      return same;
    },
    10_000,
    150,
  );
  expect(settled).toBe(true);
  return centre;
}

/** Drags from one handle to another with the mouse, as a person connects two blocks. */
export async function dragHandle(page: Page, from: string, to: string): Promise<void> {
  const a = await settledCentre(page.locator(`[data-testid="${from}"]`));
  const b = await settledCentre(page.locator(`[data-testid="${to}"]`));
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}
