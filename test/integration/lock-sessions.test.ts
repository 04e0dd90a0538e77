/**
 * Row locks on the process's shared lock sessions (src/engine/lock-sessions.ts).
 */

import { getDatabase } from "@db/instance";
import { beforeAll, describe, expect, it } from "vitest";
import { LockHub, rowLockKey } from "@/engine/lock-sessions";
import { acquireRowLock } from "@/engine/row-lock";
import { useTestDatabase } from "../helpers/db";
import { resourcesOf } from "../helpers/engine";

beforeAll(async () => {
  await useTestDatabase();
});

describe("row locks on shared sessions", () => {
  it("a second carrier of the process is refused a row its holder is still working", async () => {
    const a = await acquireRowLock(resourcesOf(getDatabase()), "tbl_lock", "row_busy");
    expect(a).not.toBeNull();
    // Re-entrant in Postgres (same session), so only the process map can refuse it.
    expect(await acquireRowLock(resourcesOf(getDatabase()), "tbl_lock", "row_busy")).toBeNull();
    await a?.release();
    const again = await acquireRowLock(resourcesOf(getDatabase()), "tbl_lock", "row_busy");
    expect(again).not.toBeNull();
    await again?.release();
  });

  it("locks asked in the same event-loop turn share one statement, the first not alone", async () => {
    const hub = new LockHub(getDatabase(), 1);
    try {
      const keys = ["row_turn_a", "row_turn_b", "row_turn_c"].map((r) => rowLockKey("tbl_lock", r));
      const sessions = await Promise.all(keys.map((k) => hub.acquire(k)));
      expect(sessions.every((s) => s !== null)).toBe(true);
      expect(hub.statements).toBe(1);
    } finally {
      hub.close();
    }
  });

  it("a carrier asking while the holder is letting go waits for it and gets the row", async () => {
    // The holder's "more queued?" read is taken with its unlock: a carrier that came for a
    // cell stamped after that read and was refused would leave the cell to the re-drive.
    const a = await acquireRowLock(resourcesOf(getDatabase()), "tbl_lock", "row_release");
    expect(a).not.toBeNull();
    const releasing = a?.release();
    const b = await acquireRowLock(resourcesOf(getDatabase()), "tbl_lock", "row_release");
    await releasing;
    expect(b).not.toBeNull();
    await b?.release();
  });
});
