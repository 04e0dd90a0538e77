import { describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { prettyDestination, prettyLine } from "@/config/log-pretty";

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({
    level: 30,
    time: Date.UTC(2026, 11, 3, 9, 8, 7, 654),
    service: "cellflow",
    pid: 1,
    msg: "worker started",
    ...fields,
  });

describe("readable log lines", () => {
  it("show the time, the level and the message, then the fields that say where", () => {
    expect(prettyLine(line({ tableId: "tbl_1", rowId: "row_2", concurrency: 50 }), false)).toBe(
      "09:08:07.654 INFO  worker started tableId=tbl_1 rowId=row_2 concurrency=50",
    );
  });

  it("quote a field that has spaces, and keep objects as JSON", () => {
    expect(prettyLine(line({ reason: "a b", report: { requeued: 1 } }), false)).toBe(
      '09:08:07.654 INFO  worker started reason="a b" report={"requeued":1}',
    );
  });

  it("put an error's message in the line and its stack under it", () => {
    const text = prettyLine(
      line({
        level: 50,
        msg: "carrier failed",
        err: { message: "boom", stack: "Error: boom\n    at x" },
      }),
      false,
    );
    expect(text).toBe("09:08:07.654 ERROR carrier failed err=boom\nError: boom\n    at x");
  });

  it("colour only when asked, and pass a line that is not JSON through unchanged", () => {
    expect(prettyLine(line({}), true)).toContain("\u001b[32mINFO ");
    expect(prettyLine(line({}), false)).not.toContain("\u001b[");
    expect(prettyLine("[cellflow] open: http://127.0.0.1:3000", true)).toBe(
      "[cellflow] open: http://127.0.0.1:3000",
    );
  });

  it("a destination writes each line of a chunk as its own readable line", () => {
    const out: string[] = [];
    prettyDestination({ write: (t: string) => out.push(t) }, false).write(
      `${line({ a: 1 })}\n${line({ b: 2 })}\n`,
    );
    expect(out).toEqual([
      "09:08:07.654 INFO  worker started a=1\n",
      "09:08:07.654 INFO  worker started b=2\n",
    ]);
  });

  it("LOG_FORMAT takes json or pretty, and refuses anything else", () => {
    expect(readEnv({ LOG_FORMAT: "json" }).LOG_FORMAT).toBe("json");
    expect(readEnv({}).LOG_FORMAT).toBeUndefined();
    expect(() => readEnv({ LOG_FORMAT: "yaml" })).toThrow(/LOG_FORMAT/);
  });
});
