/**
 * Hooks every test file gets (vitest `setupFiles`). They live here rather than in
 * `useTestDatabase`, which most files call inside `beforeAll`, where an `afterAll` it
 * registered would never run.
 */
import { afterAll } from "vitest";
import { testDatabaseUrl } from "./db";
import { eventsOutsideContract } from "./event-contract";

afterAll(async () => {
  const url = testDatabaseUrl();
  if (!url) return;
  // Whatever this file made the server do, each event it wrote fits the stream's schemas.
  const breaches = await eventsOutsideContract(url);
  if (breaches.length > 0)
    throw new Error(`events outside the stream's contract:\n${breaches.join("\n")}`);
});
