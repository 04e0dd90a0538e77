/** The stream's event schemas, and the suite's strict check of what the server wrote. */
import { describe, expect, it } from "vitest";
import { parseTableEvent } from "@/contracts/events";
import { eventContractBreach } from "../helpers/event-contract";

const cell = {
  rowId: "row_1",
  groupId: "enrich",
  status: "completed",
  outcome: "ok",
  executionId: "ex2_1",
  attempt: 1,
  error: null,
  runningBlockIds: [],
  blockErrors: {},
  outputs: { title: "Hello", stale: null },
};

describe("table event contract", () => {
  it("accepts each kind's data as the server writes it", () => {
    expect(eventContractBreach("cell", cell)).toBeNull();
    expect(
      eventContractBreach("cell", {
        rowId: "r",
        groupId: "g",
        status: null,
        executionId: "ex2_1",
        attempt: 0,
        cleared: true,
      }),
    ).toBeNull();
    expect(eventContractBreach("rows", { op: "insert", rowIds: ["a", "b"] })).toBeNull();
    // An insert or delete of many rows counts them instead of listing them (issue 33).
    expect(
      eventContractBreach("rows", { op: "delete", rowIds: [], count: 5000, bulk: true }),
    ).toBeNull();
    expect(eventContractBreach("schema", { schemaVersion: 3, name: "Leads" })).toBeNull();
    expect(eventContractBreach("dispatch", { dispatchId: "d", status: "completed" })).toBeNull();
    // An active run's news stands for many cells (issue 33: no `cell` event per cell).
    expect(
      eventContractBreach("dispatch", {
        dispatchId: "d",
        status: "active",
        stamped: { cells: 2000, rows: 1000, afterPosition: 0, lastPosition: 1000 },
      }),
    ).toBeNull();
    expect(
      eventContractBreach("dispatch", { dispatchId: "d", status: "active", cancelled: 900 }),
    ).toBeNull();
    expect(
      eventContractBreach("limit", {
        dispatchId: "d",
        reason: "run_credit_cap",
        haltReason: "run_credit_cap",
        message: "The run's cap of 10 credits is reached.",
      }),
    ).toBeNull();
    expect(
      eventContractBreach("reset", { reason: "cursor older than retention", resumeFrom: 9 }),
    ).toBeNull();
    expect(
      eventContractBreach("progress", {
        rows: 3,
        groups: [
          {
            groupId: "g",
            queued: 1,
            running: 0,
            paused: 0,
            completed: 1,
            ok: 1,
            notFound: 0,
            skipped: 0,
            conditionNotMet: 0,
            overBudget: 0,
            error: 0,
            cancelled: 0,
            neverRun: 1,
          },
        ],
      }),
    ).toBeNull();
  });

  it("names a field the schema does not, a missing field, a wrong value and an unknown kind", () => {
    expect(eventContractBreach("cell", { ...cell, surprise: 1 })).toMatch(/surprise/);
    const { attempt: _, ...noAttempt } = cell;
    expect(eventContractBreach("cell", noAttempt)).toMatch(/attempt/);
    // `active` is a run's status now too (a stamping page's or a Stop's event): a status
    // no run has is the wrong value.
    expect(eventContractBreach("dispatch", { dispatchId: "d", status: "paused" })).toMatch(
      /status/,
    );
    expect(eventContractBreach("rows", { op: "upsert", rowIds: [] })).toMatch(/op/);
    expect(eventContractBreach("tick", {})).toMatch(/unknown kind/);
  });

  it("lets a reader parse what it knows and skip the rest, ignoring fields added later", () => {
    expect(parseTableEvent("cell", { ...cell, addedLater: true })?.event).toBe("cell");
    expect(parseTableEvent("tick", {})).toBeNull();
    expect(parseTableEvent("rows", { rowIds: "x" })).toBeNull();
  });
});
