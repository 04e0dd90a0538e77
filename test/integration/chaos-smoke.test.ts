/**
 * The chaos run in small (`npm run chaos` is the full one, docs/reliability.md): 300
 * cells (150 rows × 2 chained groups calling a loopback sink) carried by two real worker
 * processes, one of which is SIGKILLed mid-run and restarted; the re-drive (every second
 * here) must heal what it left. Judged by the same invariants as the full run, over an
 * audit trigger on this file's own database.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ChainResult } from "../../chaos/chain-run";
import { seededRandom } from "../../chaos/config";
import { workerKill } from "../../chaos/scenarios/worker-kill";
import { openDatabase } from "../../chaos/workload";
import type { Database } from "../../db/client";
import { useTestDatabase } from "../helpers/db";

let url: string;
let database: Database;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  database = await openDatabase(url, 5);
});
afterAll(() => database.close());

it("a worker SIGKILLed mid-run loses no cell and makes no illegal transition", async () => {
  const r: ChainResult = await workerKill({
    url,
    database,
    rows: 150,
    workers: 2,
    concurrency: 5,
    redriveEveryMs: 1_000,
    sinkMs: 10,
    timeoutMs: 60_000,
    kills: 1,
    random: seededRandom(7),
    // Early enough that the victim is mid-run, late enough that it has cells in flight.
    window: [0.25, 0.45],
  });
  // The whole verdict when something broke, for whoever reads the failure.
  if (r.invariants.lost > 0 || r.invariants.illegalTransitions > 0)
    console.error(JSON.stringify(r, null, 2));
  expect(r.faults).toHaveLength(1);
  expect(r.end).toBe("completed");
  expect(r.invariants.stampedCells).toBe(300);
  expect(r.invariants.lost).toBe(0);
  expect(r.invariants.illegalTransitions).toBe(0);
  expect(r.invariants.terminalMoreThanOnce).toBe(0);
}, 120_000);
