import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseCommand } from "@/cli/args";
import { cli } from "@/cli/cli";
import { deleteRowsRequest } from "@/cli/commands/rows";
import { estimateText, RUN_SPEC, runRequest } from "@/cli/commands/run";
import { stopRequest } from "@/cli/commands/stop";
import { coerceValue, whereEquals, whereFromJson } from "@/cli/where-args";
import type { Schemas } from "@/client/cellflow-client";
import { freePort } from "../helpers/processes";

/** The fields an answer always carries (the server fills in their defaults). */
const answered = { inputs: {}, outputs: [], dependsOn: [], autoRun: false };

const table: Schemas["TableView"] = {
  id: "tbl_1",
  name: "Companies",
  rowCount: 3,
  schemaVersion: 1,
  autoRun: true,
  maxCreditsPerRow: null,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  columns: [
    { id: "n", name: "Employees", type: "number" },
    { id: "paid", name: "Paid", type: "boolean" },
    { id: "since", name: "Since", type: "date" },
    { id: "tier", name: "Tier", type: "select", options: ["free", "pro"] },
    { id: "note", name: "Note", type: "text" },
    { id: "tags", name: "Tags", type: "json" },
    { id: "dup_a", name: "Same", type: "text" },
    { id: "dup_b", name: "Same", type: "text" },
  ],
  groups: [
    { id: "enrich", name: "Enrich", kind: "enrichment", enrichmentId: "email_domain", ...answered },
    {
      id: "classify",
      name: "Classify",
      kind: "workflow",
      workflowId: "wf_1",
      version: "live",
      ...answered,
    },
  ],
};

const column = (id: string) => {
  const c = table.columns.find((x) => x.id === id);
  if (!c) throw new Error(id);
  return c;
};

describe("--where col=value reads the value as the column's type", () => {
  it("numbers, booleans, dates, select options, text and JSON", () => {
    expect(coerceValue(column("n"), "42")).toEqual({ ok: true, value: 42 });
    expect(coerceValue(column("n"), " -1.5e3 ")).toEqual({ ok: true, value: -1500 });
    for (const yes of ["true", "YES", "1"])
      expect(coerceValue(column("paid"), yes)).toEqual({ ok: true, value: true });
    for (const no of ["false", "No", "0"])
      expect(coerceValue(column("paid"), no)).toEqual({ ok: true, value: false });
    expect(coerceValue(column("since"), "2026-01-31")).toEqual({ ok: true, value: "2026-01-31" });
    expect(coerceValue(column("tier"), "pro")).toEqual({ ok: true, value: "pro" });
    expect(coerceValue(column("note"), " 42 ")).toEqual({ ok: true, value: " 42 " });
    expect(coerceValue(column("tags"), '["a"]')).toEqual({ ok: true, value: ["a"] });
    expect(coerceValue(column("tags"), "plain")).toEqual({ ok: true, value: "plain" });
  });

  it("a value the column cannot hold is bad usage, never sent", () => {
    for (const [id, value] of [
      ["n", "abc"],
      ["n", "0x10"],
      ["n", ""],
      ["n", "1,234"],
      ["paid", "maybe"],
      ["since", "yesterday"],
      ["tier", "enterprise"],
    ] as const) {
      const r = coerceValue(column(id), value);
      expect(r.ok, `${id}=${value}`).toBe(false);
      if (!r.ok) expect(r.reason.exit).toBe(2);
    }
  });

  it("columns are named by id or name (any case); a shared name is refused", () => {
    expect(whereEquals(table, "Employees=5")).toEqual({
      ok: true,
      value: { column: "n", op: "eq", value: 5 },
    });
    expect(whereEquals(table, "employees=5")).toMatchObject({ ok: true, value: { column: "n" } });
    expect(whereEquals(table, "note=a=b")).toEqual({
      ok: true,
      value: { column: "note", op: "eq", value: "a=b" },
    });
    const shared = whereEquals(table, "Same=x");
    expect(shared.ok).toBe(false);
    if (!shared.ok) expect(shared.reason.message).toContain("give the id");
    const unknown = whereEquals(table, "size=x");
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) {
      expect(unknown.reason).toMatchObject({ exit: 2 });
      expect(unknown.reason.details?.[0]).toContain("n (Employees)");
    }
    expect(whereEquals(table, "=5").ok).toBe(false);
    expect(whereEquals(table, "n").ok).toBe(false);
  });

  it("--where-json takes a group's outcome, checked against the outcomes", () => {
    expect(whereFromJson(table, '[{"group":"Enrich","outcome":"condition_not_met"}]')).toEqual({
      ok: true,
      value: [{ group: "enrich", outcome: "condition_not_met" }],
    });
    expect(whereFromJson(table, '[{"group":"enrich","outcome":"done"}]').ok).toBe(false);
  });

  it("--where-json is sent as written, with names resolved to ids", () => {
    expect(
      whereFromJson(
        table,
        '[{"column":"Employees","op":"gt","value":5},{"group":"Enrich","status":"error"},{"group":"classify","status":null}]',
      ),
    ).toEqual({
      ok: true,
      value: [
        { column: "n", op: "gt", value: 5 },
        { group: "enrich", status: "error" },
        { group: "classify", status: null },
      ],
    });
    for (const bad of [
      "{",
      '{"column":"n"}',
      '[{"column":"n","op":"like"}]',
      '[{"x":1}]',
      '[{"group":"enrich","status":"done"}]',
    ])
      expect(whereFromJson(table, bad).ok, bad).toBe(false);
  });
});

const parseRun = (argv: string[]) => {
  const parsed = parseCommand(RUN_SPEC, argv);
  if (!parsed.ok) return parsed;
  return runRequest(table, parsed.value.values);
};

describe("run and stop flags", () => {
  it("every run flag lands in the request body, names resolved", () => {
    expect(
      parseRun([
        "Companies",
        "--group",
        "Enrich",
        "--group",
        "classify",
        "--mode",
        "failed",
        "--where",
        "Paid=yes",
        "--where-json",
        '[{"column":"n","op":"gte","value":10}]',
        "--limit",
        "50",
        "--resume",
        "--max-credits",
        "20",
        "--max-credits-per-row",
        "2.5",
        "--dry-run",
      ]),
    ).toEqual({
      ok: true,
      value: {
        mode: "failed",
        groupIds: ["enrich", "classify"],
        where: [
          { column: "paid", op: "eq", value: true },
          { column: "n", op: "gte", value: 10 },
        ],
        limit: 50,
        maxCredits: 20,
        maxCreditsPerRow: 2.5,
        resume: true,
        dryRun: true,
      },
    });
  });

  it("--mode stale sends its hours, and needs them", () => {
    expect(parseRun(["T", "--mode", "stale", "--stale-after-hours", "24"])).toEqual({
      ok: true,
      value: { mode: "stale", staleAfterHours: 24 },
    });
    for (const argv of [
      ["T", "--mode", "stale"],
      ["T", "--mode", "stale", "--stale-after-hours", "0"],
      ["T", "--mode", "stale", "--stale-after-hours", "soon"],
      ["T", "--mode", "all", "--stale-after-hours", "2"],
    ])
      expect(parseRun(argv)).toMatchObject({ ok: false, reason: { exit: 2 } });
  });

  it("--max-credits takes credits to 1/1000, as the API does", () => {
    expect(parseRun(["T", "--max-credits", "0.5"])).toEqual({
      ok: true,
      value: { mode: "incomplete", maxCredits: 0.5 },
    });
  });

  it("the default mode is incomplete and nothing else is sent", () => {
    expect(parseRun(["Companies"])).toEqual({ ok: true, value: { mode: "incomplete" } });
  });

  it("bad values and unknown flags are bad usage (exit 2)", () => {
    for (const argv of [
      ["T", "--mode", "some"],
      ["T", "--limit", "0"],
      ["T", "--limit", "ten"],
      ["T", "--max-credits", "1.0005"],
      ["T", "--max-credits", "0"],
      ["T", "--max-credits-per-row", "0"],
      ["T", "--max-credits-per-row", "1.0005"],
      ["T", "--max-credits-per-row", "-2"],
      ["T", "--group", "nope"],
      ["T", "--bogus"],
      ["T", "--follow", "--dry-run"],
      ["T", "extra"],
      [],
      ["T", "--mode"],
    ]) {
      const r = parseRun(argv);
      expect(r.ok, argv.join(" ")).toBe(false);
      if (!r.ok) expect(r.reason.exit).toBe(2);
    }
  });

  it("stop scopes by run, groups and rows", () => {
    expect(stopRequest(table, {})).toEqual({ ok: true, value: {} });
    expect(stopRequest(table, { run: "d_9", group: ["Classify"], where: ["tier=pro"] })).toEqual({
      ok: true,
      value: {
        dispatchId: "d_9",
        groupIds: ["classify"],
        where: [{ column: "tier", op: "eq", value: "pro" }],
      },
    });
  });

  it("rows delete needs a condition, and sends its conditions typed", () => {
    const none = deleteRowsRequest(table, {});
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.reason.exit).toBe(2);
    expect(
      deleteRowsRequest(table, {
        where: ["Employees=5"],
        "where-json": '[{"group":"enrich","status":"error"}]',
      }),
    ).toEqual({
      ok: true,
      value: {
        where: [
          { column: "n", op: "eq", value: 5 },
          { group: "enrich", status: "error" },
        ],
      },
    });
  });
});

async function invoke(argv: string[], env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const code = await cli(argv, {
    env,
    stdout,
    stderr,
    interrupted: new AbortController().signal,
    claimInterrupt: () => {},
  });
  return { code, out, err };
}

describe("exit codes before anything is sent", () => {
  it("help needs no key and exits 0, for the CLI and each command", async () => {
    expect(await invoke(["--help"])).toMatchObject({ code: 0, err: "" });
    for (const c of ["tables", "import", "export", "run", "stop", "events"]) {
      const r = await invoke([c, "--help"]);
      expect(r.code, c).toBe(0);
      expect(r.out).toContain(`usage: cellflow ${c}`);
    }
    expect((await invoke(["help", "run"])).out).toContain("--follow");
  });

  it("no command, an unknown one, or a missing argument exits 2", async () => {
    expect((await invoke([])).code).toBe(2);
    const unknown = await invoke(["frobnicate"]);
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.err).toContain('unknown command "frobnicate"');
    const missing = await invoke(["import", "T"], { CELLFLOW_API_KEY: "k" });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("missing <file.csv>");
  });

  it("a missing key exits 2 with one line saying where the key is", async () => {
    const r = await invoke(["tables"]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain("CELLFLOW_API_KEY");
    expect(r.err).toContain("npm start prints it");
  });

  it("a CELLFLOW_URL that is not an http(s) URL exits 2", async () => {
    for (const url of ["not a url", "ftp://x"])
      expect((await invoke(["tables"], { CELLFLOW_URL: url, CELLFLOW_API_KEY: "k" })).code).toBe(2);
  });

  it("a server that cannot be reached exits 1 saying so", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await invoke(["tables"], { CELLFLOW_URL: url, CELLFLOW_API_KEY: "k" });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `cellflow: cannot reach ${url} (ECONNREFUSED): is the server running (npm start), and is CELLFLOW_URL right?\n`,
    );
  });
});

describe("the dry run's text", () => {
  it("names each group's cells and credits, and the cells the cache would serve", () => {
    const text = estimateText(
      {
        rows: 3,
        cells: 4,
        skippedByCondition: 0,
        estimatedCredits: 5,
        maxCreditsPerRow: null,
        rowBudgetCapped: false,
        estimate: "complete",
        unknown: [],
        upperBound: [],
        groups: [
          { groupId: "enrich", cells: 3, credits: 5, cached: 2, skippedByCondition: 0 },
          { groupId: "classify", cells: 1, credits: 0, cached: 0, skippedByCondition: 0 },
        ],
      },
      table,
    );
    expect(text).toBe(
      [
        "dry run (nothing started): 3 rows, 4 cells, 5 estimated credits",
        "  Enrich: 3 cells, 5 credits (2 from the cache)",
        "  Classify: 1 cell, 0 credits",
        "",
      ].join("\n"),
    );
  });

  it("names the cells whose run condition does not hold (no credits)", () => {
    const text = estimateText(
      {
        rows: 3,
        cells: 3,
        skippedByCondition: 2,
        estimatedCredits: 5,
        maxCreditsPerRow: null,
        rowBudgetCapped: false,
        estimate: "complete",
        unknown: [],
        upperBound: [],
        groups: [{ groupId: "enrich", cells: 3, credits: 5, cached: 0, skippedByCondition: 2 }],
      },
      table,
    );
    expect(text).toContain("  Enrich: 3 cells, 5 credits (2 condition not met)");
  });
});
