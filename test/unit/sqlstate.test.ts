import { isConnectionLoss } from "@db/sqlstate";
import { describe, expect, it } from "vitest";

const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("a lost database is told apart from a wrong statement", () => {
  it("a crashed or restarting server, and a dropped socket, are connection losses", () => {
    expect(
      isConnectionLoss(
        pgError("57P01", "terminating connection due to unexpected postmaster exit"),
      ),
    ).toBe(true);
    expect(isConnectionLoss(pgError("57P03", "the database system is starting up"))).toBe(true);
    expect(isConnectionLoss(pgError("08006"))).toBe(true);
    expect(isConnectionLoss(pgError("ECONNREFUSED"))).toBe(true);
    expect(isConnectionLoss(new Error("Connection terminated unexpectedly"))).toBe(true);
  });

  it("is found behind the wrappers drizzle puts around a driver error", () => {
    const wrapped = new Error("Failed query: select 1", {
      cause: new Error("Client has encountered a connection error and is not queryable"),
    });
    expect(isConnectionLoss(wrapped)).toBe(true);
  });

  it("constraint violations, syntax errors and plain bugs are not", () => {
    expect(isConnectionLoss(pgError("23505", "duplicate key"))).toBe(false);
    expect(isConnectionLoss(pgError("42601", "syntax error"))).toBe(false);
    expect(isConnectionLoss(new TypeError("x is undefined"))).toBe(false);
    expect(isConnectionLoss("Connection terminated")).toBe(false);
    expect(isConnectionLoss(null)).toBe(false);
  });
});
