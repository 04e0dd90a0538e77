/**
 * The cell state machine at the store level, with the interleavings forced by hand:
 * each test runs the racing writes in the order that used to corrupt cells elsewhere.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { CellStatus } from "@/domain/statuses";
import { cancelCells } from "@/store/cells/cancel";
import { failQueuedCell } from "@/store/cells/fail-queued";
import { failCell } from "@/store/cells/finish";
import { pauseAttempt } from "@/store/cells/pause-attempt";
import { writeProgress } from "@/store/cells/progress";
import { resumeCell } from "@/store/cells/resume";
import { stampPage } from "@/store/cells/stamp";
import { unstampCell } from "@/store/cells/unstamp";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { claimNext, completeCell } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";

let tableId: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  const ws = await newWorkspace();
  const t = await createTable(db(), ws.id, {
    name: "guards",
    schema: { columns: [{ id: "out", name: "Out", type: "text" }], groups: [] },
  });
  tableId = t.id;
});

async function newRow(): Promise<string> {
  const rows = await insertRows(db(), tableId, [{}]);
  return rows?.[0]?.id as string;
}

async function stamp(
  rowId: string,
  mode: "all" | "new" | "incomplete" = "all",
): Promise<string | null> {
  await stampPage(db(), {
    tableId,
    dispatchId: null,
    groupIds: ["g"],
    mode,
    rowIds: [rowId],
    afterPosition: -1,
    maxRows: 10,
  });
  return (await cell(rowId))?.execution_id ?? null;
}

async function cell(rowId: string) {
  const rows = await queryRows<{ status: CellStatus; execution_id: string; error: string | null }>(
    db(),
    sql`select status, execution_id, error from cells where row_id = ${rowId} and group_id = 'g'`,
  );
  return rows[0] ?? null;
}

async function out(rowId: string): Promise<unknown> {
  const rows = await queryRows<{ data: Record<string, unknown> }>(
    db(),
    sql`select data from rows where id = ${rowId}`,
  );
  return rows[0]?.data.out;
}

/** The carrier's claim of the row's cell (its row step): null when it claimed nothing. */
const claim = (rowId: string) => claimNext(db(), { tableId, rowId, groupId: "g" });

// Writes of the first attempt of e unless told otherwise (a claim counts attempts up).
const progress = (rowId: string, e: string, attempt = 1) =>
  writeProgress(db(), {
    rowId,
    groupId: "g",
    executionId: e,
    attempt,
    progress: { runningBlockIds: ["b"], blockErrors: {}, outputs: { out: "partial" } },
  });
const complete = (rowId: string, e: string, attempt = 1) =>
  completeCell(db(), {
    tableId,
    rowId,
    groupId: "g",
    executionId: e,
    attempt,
    outcome: "ok",
    finish: { blockErrors: {}, outputs: { out: "done" } },
  });
const fail = (rowId: string, e: string, attempt = 1) =>
  failCell(db(), {
    rowId,
    groupId: "g",
    executionId: e,
    attempt,
    message: "boom",
    finish: { blockErrors: {} },
  });

describe("cell guards", () => {
  it("a cancelled cell is never revived by any worker write, whatever the interleaving", async () => {
    // Stop before the claim.
    const r1 = await newRow();
    const e1 = (await stamp(r1)) as string;
    await cancelCells(db(), { tableId, rowIds: [r1] });
    expect(await claim(r1)).toBeNull();
    expect((await cell(r1))?.status).toBe("cancelled");
    expect(
      await failQueuedCell(db(), { rowId: r1, groupId: "g", executionId: e1, message: "late" }),
    ).toEqual({
      ok: false,
      reason: "cancelled",
    });
    // Stop while running: progress, complete and fail all bounce, and no output lands.
    const r2 = await newRow();
    const e2 = (await stamp(r2)) as string;
    expect(await claim(r2)).toMatchObject({ executionId: e2, attempt: 1 });
    await cancelCells(db(), { tableId, rowIds: [r2] });
    for (const write of [progress, complete, fail]) {
      expect(await write(r2, e2)).toEqual({ ok: false, reason: "cancelled" });
    }
    expect((await cell(r2))?.status).toBe("cancelled");
    expect(await out(r2)).toBeUndefined();
    // A second claim cannot resurrect it either.
    expect(await claim(r2)).toBeNull();
    expect((await cell(r2))?.status).toBe("cancelled");
  });

  it("after a re-run, every write of the old attempt is rejected", async () => {
    const r = await newRow();
    const old = (await stamp(r)) as string;
    expect(await claim(r)).toMatchObject({ executionId: old, attempt: 1 });
    const fresh = (await stamp(r, "all")) as string;
    expect(fresh).not.toBe(old);
    for (const write of [progress, complete, fail])
      expect(await write(r, old)).toEqual({ ok: false, reason: "stale" });
    expect(await out(r)).toBeUndefined();
    // The next claim is the new execution's first attempt: the same number as the old
    // one's, so the execution id alone keeps the old attempt's writes out.
    expect(await claim(r)).toMatchObject({ executionId: fresh, attempt: 1 });
    for (const write of [progress, complete, fail])
      expect(await write(r, old)).toEqual({ ok: false, reason: "stale" });
    expect(await out(r)).toBeUndefined();
    expect(await complete(r, fresh)).toMatchObject({ ok: true });
    expect(await out(r)).toBe("done");
  });

  it("a terminal write happens once: a second terminal write of the same attempt is rejected", async () => {
    const r = await newRow();
    const e = (await stamp(r)) as string;
    await claim(r);
    expect(await complete(r, e)).toMatchObject({ ok: true });
    expect(await fail(r, e)).toEqual({ ok: false, reason: "stale" });
    expect(await complete(r, e)).toEqual({ ok: false, reason: "stale" });
    expect((await cell(r))?.status).toBe("completed");
  });

  it("mode new never replaces a cell; incomplete never replaces one in flight or completed", async () => {
    const r = await newRow();
    const e = (await stamp(r)) as string;
    expect(await stamp(r, "new")).toBe(e);
    expect(await stamp(r, "incomplete")).toBe(e);
    await claim(r);
    expect(await stamp(r, "incomplete")).toBe(e);
    await fail(r, e);
    const again = await stamp(r, "incomplete");
    expect(again).not.toBe(e);
    expect((await cell(r))?.status).toBe("queued");
  });

  it("pause and resume are fenced like every write; Stop on a paused cell holds", async () => {
    // The engine's own writes: an attempt pauses through pauseAttempt (fenced on the
    // execution id and the attempt), an approval resumes through resumeCell.
    const r = await newRow();
    const e = (await stamp(r)) as string;
    const at = (executionId: string) => ({ tableId, rowId: r, groupId: "g", executionId });
    const pause = (executionId: string, attempt: number) =>
      pauseAttempt(db(), {
        ...at(executionId),
        attempt,
        pause: { blockId: "b", reason: "approval", taken: [] },
      });
    const resume = (executionId: string) =>
      resumeCell(db(), { ...at(executionId), data: { approval: "yes" } });
    expect(await resume(e)).toEqual({ ok: false, reason: "not_paused", status: "queued" });
    const first = await claim(r);
    if (!first) throw new Error("claimed nothing");
    expect(await pause("ex_other", first.attempt)).toBe(false);
    expect(await pause(e, first.attempt + 1)).toBe(false);
    expect(await pause(e, first.attempt)).toBe(true);
    expect(await complete(r, e, first.attempt)).toEqual({ ok: false, reason: "stale" });
    expect(await resume("ex_other")).toEqual({ ok: false, reason: "stale" });
    expect(await resume(e)).toEqual({ ok: true });
    // A resume hands the cell back to the queue under the same execution id.
    expect((await cell(r))?.status).toBe("queued");
    const second = await claim(r);
    if (!second) throw new Error("claimed nothing");
    expect(await pause(e, first.attempt)).toBe(false);
    expect(await pause(e, second.attempt)).toBe(true);
    expect((await cancelCells(db(), { tableId, rowIds: [r] })).map((c) => c.was)).toEqual([
      "paused",
    ]);
    expect(await resume(e)).toEqual({ ok: false, reason: "not_paused", status: "cancelled" });
    expect(await pause(e, second.attempt)).toBe(false);
    expect((await cell(r))?.status).toBe("cancelled");
  });

  it("unstamp returns only a still-queued cell of that execution to never-run", async () => {
    const r = await newRow();
    const e = (await stamp(r)) as string;
    expect(await unstampCell(db(), { rowId: r, groupId: "g", executionId: "ex_other" })).toEqual({
      ok: false,
      reason: "stale",
    });
    expect(await unstampCell(db(), { rowId: r, groupId: "g", executionId: e })).toMatchObject({
      ok: true,
    });
    expect(await cell(r)).toBeNull();
    const e2 = (await stamp(r, "new")) as string;
    await claim(r);
    expect(await unstampCell(db(), { rowId: r, groupId: "g", executionId: e2 })).toEqual({
      ok: false,
      reason: "stale",
    });
    expect((await cell(r))?.status).toBe("running");
  });

  it("writes on a deleted row report gone and write nothing", async () => {
    const r = await newRow();
    const e = (await stamp(r)) as string;
    await claim(r);
    await db().execute(sql`delete from rows where id = ${r}`);
    expect(await complete(r, e)).toEqual({ ok: false, reason: "gone" });
  });

  it("every successful transition appends exactly one cell event", async () => {
    const r = await newRow();
    const e = (await stamp(r)) as string;
    await claim(r);
    await progress(r, e);
    await complete(r, e);
    await complete(r, e); // rejected: no event
    const events = await queryRows<{ status: string }>(
      db(),
      sql`select data->>'status' as status from events where kind = 'cell' and data->>'rowId' = ${r} order by id`,
    );
    expect(events.map((x) => x.status)).toEqual(["queued", "running", "running", "completed"]);
  });
});

/**
 * Model-based: random sequences of stamp / claim / progress / pause / resume / terminal / cancel /
 * re-stamp
 * from concurrent actors (each actor holds the execution id it last saw), run against
 * real Postgres, each step checked against the state machine of DESIGN.md §4.
 */
type Op =
  | { kind: "stamp"; mode: "all" | "new" | "incomplete" | "stale" }
  | {
      kind: "claim" | "progress" | "complete" | "fail" | "failQueued" | "pause" | "resume";
      actor: number;
    }
  | { kind: "cancel" }
  | { kind: "observe"; actor: number };

interface Model {
  status: CellStatus | null;
  exec: string | null;
}

describe("model-based", () => {
  it("random interleavings from concurrent actors always follow the cell state machine", async () => {
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant("stamp" as const),
        mode: fc.constantFrom(
          "all" as const,
          "new" as const,
          "incomplete" as const,
          "stale" as const,
        ),
      }),
      fc.record({
        kind: fc.constantFrom(
          "claim" as const,
          "progress" as const,
          "complete" as const,
          "fail" as const,
          "failQueued" as const,
        ),
        actor: fc.integer({ min: 0, max: 2 }),
      }),
      fc.constant({ kind: "cancel" as const }),
      fc.record({ kind: fc.constant("observe" as const), actor: fc.integer({ min: 0, max: 2 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const r = await newRow();
        const model: Model = { status: null, exec: null };
        // The number the last winning claim gave (writes of a running attempt carry it).
        let attempt = 0;
        const seen: (string | null)[] = [null, null, null];
        for (const op of ops) {
          switch (op.kind) {
            case "stamp": {
              const before = { ...model };
              await stampPage(db(), {
                tableId,
                dispatchId: null,
                groupIds: ["g"],
                mode: op.mode,
                rowIds: [r],
                afterPosition: -1,
                maxRows: 1,
                // A cut-off past every end time: any completed cell is stale.
                ...(op.mode === "stale"
                  ? { stale: { hours: 1, asOf: "2999-01-01T00:00:00Z" } }
                  : {}),
              });
              const now = await cell(r);
              const allowed =
                op.mode === "all" ||
                before.status === null ||
                (op.mode === "incomplete" &&
                  (before.status === "error" || before.status === "cancelled")) ||
                (op.mode === "stale" && before.status === "completed");
              if (allowed) {
                expect(now?.status).toBe("queued");
                expect(now?.execution_id).not.toBe(before.exec);
                model.status = "queued";
                model.exec = now?.execution_id ?? null;
              } else {
                expect(now?.status ?? null).toBe(before.status);
                expect(now?.execution_id ?? null).toBe(before.exec);
              }
              break;
            }
            case "observe":
              seen[op.actor] = model.exec;
              break;
            case "cancel": {
              const n = (await cancelCells(db(), { tableId, rowIds: [r] })).length;
              const inFlight =
                model.status === "queued" ||
                model.status === "running" ||
                model.status === "paused";
              expect(n).toBe(inFlight ? 1 : 0);
              if (inFlight) model.status = "cancelled";
              break;
            }
            case "claim": {
              // A carrier's step claims whatever cell of the row is queued, whichever
              // execution it is: the actor carries the one it claimed from then on.
              const claimed = await claim(r);
              expect(claimed !== null, `claim by actor ${op.actor} in ${model.status}`).toBe(
                model.status === "queued",
              );
              if (claimed) {
                expect(claimed.executionId).toBe(model.exec);
                attempt = claimed.attempt;
                seen[op.actor] = claimed.executionId;
                model.status = "running";
              }
              break;
            }
            default: {
              const e = seen[op.actor];
              if (!e) break;
              const mine = e === model.exec;
              const from: CellStatus = op.kind === "failQueued" ? "queued" : "running";
              const res =
                op.kind === "failQueued"
                  ? await failQueuedCell(db(), {
                      rowId: r,
                      groupId: "g",
                      executionId: e,
                      message: "x",
                    })
                  : op.kind === "progress"
                    ? await progress(r, e, attempt)
                    : op.kind === "complete"
                      ? await complete(r, e, attempt)
                      : await fail(r, e, attempt);
              const shouldWin = mine && model.status === from;
              expect(res.ok, `${op.kind} by actor ${op.actor} in ${model.status}`).toBe(shouldWin);
              if (!res.ok && model.status === "cancelled") expect(res.reason).toBe("cancelled");
              if (shouldWin) {
                model.status =
                  op.kind === "progress"
                    ? "running"
                    : op.kind === "complete"
                      ? "completed"
                      : "error";
              }
            }
          }
          const now = await cell(r);
          expect(now?.status ?? null).toBe(model.status);
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("concurrent claims of one queued cell: exactly one wins", async () => {
    for (let i = 0; i < 20; i++) {
      const r = await newRow();
      const e = (await stamp(r)) as string;
      const results = await Promise.all(Array.from({ length: 5 }, () => claim(r)));
      expect(results.filter((x) => x !== null)).toHaveLength(1);
      expect(results.find((x) => x !== null)).toMatchObject({ executionId: e, attempt: 1 });
    }
  });

  it("cancel racing a claim: the cell ends cancelled either way", async () => {
    for (let i = 0; i < 20; i++) {
      const r = await newRow();
      const e = (await stamp(r)) as string;
      await Promise.all([claim(r), cancelCells(db(), { tableId, rowIds: [r] })]);
      expect((await cell(r))?.status).toBe("cancelled");
      expect(await complete(r, e)).toEqual({ ok: false, reason: "cancelled" });
    }
  });
});
