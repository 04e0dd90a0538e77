/**
 * The workflow editor's logic without a browser: where a JSON syntax error is (line and
 * column, as people count them), where a path the API reports sits in the text, and the
 * block graph read from a definition being typed (entry, edges, condition ports, the
 * problems the API would refuse).
 */
import { describe, expect, it } from "vitest";
import { Block, WorkflowDefinition } from "@/contracts/workflow";
import { checkWorkflowDefinition } from "@/domain/workflow-graph";
import { ANTHROPIC_API_KEY_SECRET, LLM_API_KEY_SECRET } from "@/execution/blocks/llm";
import { ApiError } from "@/ui/api";
import {
  BLOCK_HELP,
  COMMON_FIELDS,
  canAddBlock,
  freeBlockId,
  starterDefinition,
  withBlockAdded,
} from "@/ui/workflows/block-help";
import { timeAgo } from "@/ui/workflows/format";
import {
  blockAtOffset,
  blockIndexOfPath,
  describeDefinition,
  KNOWN_BLOCK_TYPES,
  pathLabel,
} from "@/ui/workflows/graph";
import {
  canonicalJson,
  lineColumn,
  newlineWithIndent,
  parseJsonText,
  spanOfPath,
} from "@/ui/workflows/json-text";
import { saveRefusal, uniqueIssues } from "@/ui/workflows/save-refusal";
import { isSaveShortcut } from "@/ui/workflows/use-page-keys";

const EXAMPLE = {
  inputs: [{ name: "n", type: "number", required: true }],
  blocks: [
    { id: "double", type: "transform", expression: "inputs.n * 2", next: "check" },
    {
      id: "check",
      type: "condition",
      expression: "blocks.double > 10",
      next: { true: "big", false: "small" },
    },
    { id: "big", type: "transform", expression: "'big'" },
    { id: "small", type: "transform", expression: "'small'" },
  ],
};

function syntaxError(text: string) {
  const r = parseJsonText(text);
  if (r.ok) throw new Error(`expected a syntax error in ${JSON.stringify(text)}`);
  return r.error;
}

describe("parseJsonText", () => {
  it("gives the same value as JSON.parse for valid JSON", () => {
    const samples = [
      JSON.stringify(EXAMPLE, null, 2),
      '  {"a": [1, -2.5e3, 0, true, false, null, "x\\n\\"y\\u00e9"], "b": {}}  ',
      "[]",
      '"just a string"',
      "-0.125",
      '{"__proto__": {"polluted": true}}',
    ];
    for (const text of samples) {
      const r = parseJsonText(text);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.value).toEqual(JSON.parse(text));
    }
    const proto = parseJsonText('{"__proto__": {"polluted": true}}');
    expect(proto.ok && Object.getPrototypeOf(proto.value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("places a missing comma on the line of the next property", () => {
    const text = '{\n  "a": 1\n  "b": 2\n}';
    const e = syntaxError(text);
    expect(e).toMatchObject({ line: 3, column: 3, offset: text.indexOf('"b"') });
    expect(e.message).toContain("comma");
  });

  it("reports a trailing comma where the closing bracket is", () => {
    const text = '{\n  "blocks": [\n    {"id": "a"},\n  ]\n}';
    expect(syntaxError(text)).toMatchObject({ line: 4, column: 3 });
    expect(syntaxError(text).message).toMatch(/trailing comma/i);
    expect(syntaxError('{"a": 1,}')).toMatchObject({ line: 1, column: 9 });
  });

  it("reports a string left open at the line break, or at its quote at the end of the text", () => {
    const e = syntaxError('{\n  "name": "oops\n}');
    expect(e).toMatchObject({ line: 2, column: 16 });
    expect(e.message).toMatch(/line break inside a string/i);
    expect(syntaxError('{"a": "oops')).toMatchObject({ line: 1, column: 7 });
    expect(syntaxError('{"a": "oops').message).toMatch(/unterminated/i);
  });

  it("reports the end of the text when it stops early, and text after the value", () => {
    expect(syntaxError('{"a": [1, 2')).toMatchObject({ line: 1, column: 12 });
    expect(syntaxError('{"a": [1, 2').message).toMatch(/end of the text/);
    expect(syntaxError("{} {}")).toMatchObject({ line: 1, column: 4 });
    expect(syntaxError("")).toMatchObject({ line: 1, column: 1 });
    expect(syntaxError("   \n  ").message).toMatch(/empty/);
  });

  it("refuses what JSON.parse refuses", () => {
    for (const bad of [
      "{'a': 1}",
      "{a: 1}",
      "[01]",
      "[1.]",
      "[-]",
      '"\\x"',
      '"\\u12G4"',
      "[tru]",
      "[NaN]",
      '"tab\there"',
    ]) {
      expect(() => JSON.parse(bad)).toThrow();
      expect(parseJsonText(bad).ok).toBe(false);
    }
    expect(syntaxError("{'a': 1}").message).toMatch(/double quotes/);
    expect(syntaxError('{"ok": tru}').message).toMatch(/^Unknown word "tru"/);
    expect(syntaxError("[undefined]")).toMatchObject({ line: 1, column: 2 });
  });

  it("counts columns from 1 and lines by line feeds", () => {
    expect(lineColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd", 3)).toEqual({ line: 2, column: 1 });
    expect(lineColumn("ab\ncd", 5)).toEqual({ line: 2, column: 3 });
    expect(lineColumn("ab\r\ncd", 4)).toEqual({ line: 2, column: 1 });
  });
});

describe("spans of paths", () => {
  const text = JSON.stringify(EXAMPLE, null, 2);
  const r = parseJsonText(text);
  if (!r.ok) throw new Error("the example parses");

  it("finds a value by the path the API reports", () => {
    const next = spanOfPath(r.spans, "definition.blocks.1.next", "definition");
    expect(next && text.slice(next.start, next.end)).toMatch(
      /^\{\s*"true": "big",\s*"false": "small"\s*\}$/,
    );
    const id = spanOfPath(r.spans, "blocks.3.id");
    expect(id && text.slice(id.start, id.end)).toBe('"small"');
    const block = spanOfPath(r.spans, "blocks.0");
    expect(block && JSON.parse(text.slice(block.start, block.end))).toEqual(EXAMPLE.blocks[0]);
  });

  it("falls back to the nearest parent for a missing field, and ignores other prefixes", () => {
    const missing = spanOfPath(r.spans, "definition.blocks.2.url", "definition");
    expect(missing && JSON.parse(text.slice(missing.start, missing.end))).toEqual(
      EXAMPLE.blocks[2],
    );
    expect(spanOfPath(r.spans, "name", "definition")).toBeUndefined();
    expect(spanOfPath(r.spans, "definition", "definition")).toEqual({ start: 0, end: text.length });
  });

  it("tells which block holds a caret offset", () => {
    const at = text.indexOf("'small'");
    expect(blockAtOffset(r.spans, 4, at)).toBe(3);
    expect(blockAtOffset(r.spans, 4, text.indexOf('"inputs"'))).toBeNull();
  });
});

describe("describeDefinition", () => {
  it("finds the entry block and lists next and the condition's ports", () => {
    const s = describeDefinition(EXAMPLE);
    expect(s.problems).toEqual([]);
    expect(s.entryIds).toEqual(["double"]);
    expect(s.blocks.map((b) => [b.id, b.type, b.entry])).toEqual([
      ["double", "transform", true],
      ["check", "condition", false],
      ["big", "transform", false],
      ["small", "transform", false],
    ]);
    expect(s.blocks[0]?.edges).toEqual([{ port: null, target: "check", known: true }]);
    expect(s.blocks[1]?.edges).toEqual([
      { port: "true", target: "big", known: true },
      { port: "false", target: "small", known: true },
    ]);
    expect(s.blocks[2]?.edges).toEqual([]);
    expect(s.blocks[1]?.detail).toBe("blocks.double > 10");
    expect(s.inputs).toEqual([{ name: "n", type: "number", required: true }]);
  });

  it("lists a fan-out and a condition with one port", () => {
    const s = describeDefinition({
      blocks: [
        { id: "a", type: "transform", expression: "1", next: ["b", "c"] },
        { id: "b", type: "condition", expression: "true", next: { false: "c" } },
        { id: "c", type: "http", method: "GET", url: "https://x.test/{{ row.id }}" },
      ],
    });
    expect(s.blocks[0]?.edges.map((e) => e.target)).toEqual(["b", "c"]);
    expect(s.blocks[1]?.edges).toEqual([{ port: "false", target: "c", known: true }]);
    expect(s.blocks[2]?.detail).toBe("GET https://x.test/{{ row.id }}");
    expect(s.entryIds).toEqual(["a"]);
    expect(s.problems).toEqual([]);
  });

  it("reports what the API refuses, with the API's paths", () => {
    const s = describeDefinition({
      blocks: [
        { id: "a", type: "transform", expression: "1", next: "nope" },
        { id: "b", type: "teleport" },
        { id: "a", type: "transform", expression: "2" },
      ],
    });
    expect(s.problems).toEqual(
      expect.arrayContaining([
        { path: "blocks.0.next", message: '"next" names unknown block "nope"' },
        { path: "blocks.1.type", message: 'unknown block type "teleport"' },
        { path: "blocks.2.id", message: 'block id "a" is used twice' },
      ]),
    );
    expect(s.blocks[0]?.edges).toEqual([{ port: null, target: "nope", known: false }]);
    expect(s.blocks[1]?.knownType).toBe(false);
    // "a" (twice) and "b" have no incoming edge.
    expect(s.problems.some((p) => p.path === "blocks" && /exactly one entry/.test(p.message))).toBe(
      true,
    );
  });

  it("finds a cycle and the lack of an entry", () => {
    const s = describeDefinition({
      blocks: [
        { id: "start", type: "transform", expression: "1", next: "a" },
        { id: "a", type: "transform", expression: "1", next: "b" },
        { id: "b", type: "transform", expression: "1", next: "a" },
      ],
    });
    expect(s.entryIds).toEqual(["start"]);
    expect(s.problems).toEqual([{ path: "blocks", message: "cycle: a → b → a" }]);
    const ring = describeDefinition({
      blocks: [
        { id: "a", type: "transform", expression: "1", next: "b" },
        { id: "b", type: "transform", expression: "1", next: "a" },
      ],
    });
    expect(ring.entryIds).toEqual([]);
    expect(ring.problems.map((p) => p.message)).toContain(
      "no entry block: every block is the target of a next",
    );
  });

  it("reads any JSON without throwing", () => {
    for (const v of [null, 3, "x", [], {}, { blocks: {} }, { blocks: [] }, { blocks: [null, 7] }]) {
      const s = describeDefinition(v);
      expect(s.problems.length).toBeGreaterThan(0);
    }
  });

  it("agrees with the API's check on the API's own example and on broken graphs", () => {
    const cases: unknown[] = [
      EXAMPLE,
      { blocks: [{ id: "a", type: "transform", expression: "1", next: "zz" }] },
      {
        blocks: [
          { id: "a", type: "transform", expression: "1" },
          { id: "b", type: "transform", expression: "1" },
        ],
      },
    ];
    for (const c of cases) {
      const api = checkWorkflowDefinition(WorkflowDefinition.parse(c));
      const ui = describeDefinition(c).problems;
      expect(ui.length === 0).toBe(api.length === 0);
    }
  });
});

describe("paths for people", () => {
  it("names blocks by id", () => {
    const ids = ["double", "check"];
    expect(pathLabel("definition.blocks.1.next", ids, "definition")).toBe('block "check" › next');
    expect(pathLabel("definition.blocks.7.id", ids, "definition")).toBe("block #8 › id");
    expect(pathLabel("definition.inputs.0.name", ids, "definition")).toBe("inputs › 0 › name");
    expect(pathLabel("definition", ids, "definition")).toBe("the whole definition");
    expect(blockIndexOfPath("definition.blocks.12.next", "definition")).toBe(12);
    expect(blockIndexOfPath("blocks.3")).toBe(3);
    expect(blockIndexOfPath("definition.blocks", "definition")).toBeNull();
    expect(blockIndexOfPath("inputs.0.name")).toBeNull();
  });
});

describe("editing helpers", () => {
  it("keeps the indentation on Enter, one level deeper after an opening bracket", () => {
    const text = '{\n  "blocks": [\n    {"id": "a"}';
    expect(newlineWithIndent(text, text.length)).toBe("\n    ");
    const afterBracket = text.indexOf("[") + 1;
    expect(newlineWithIndent(text, afterBracket)).toBe("\n    ");
    expect(newlineWithIndent("{", 1)).toBe("\n  ");
    expect(newlineWithIndent("", 0)).toBe("\n");
  });

  it("compares definitions whatever their key order and layout", () => {
    expect(
      canonicalJson(JSON.parse('{"b": 1, "a": {"y": [2, {"d": 1, "c": 0}], "x": null}}')),
    ).toBe(canonicalJson({ a: { x: null, y: [2, { c: 0, d: 1 }] }, b: 1 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });

  it("adds a block with an id that is free, and only to a definition with blocks", () => {
    expect(freeBlockId("http", new Set(["http", "http_2"]))).toBe("http_3");
    const added = withBlockAdded(EXAMPLE, "http");
    expect(added?.id).toBe("http");
    expect(added?.definition.blocks).toHaveLength(5);
    const again = added && withBlockAdded(added.definition, "http");
    expect(again?.id).toBe("http_2");
    expect(withBlockAdded({ inputs: [] }, "wait")).toBeNull();
    expect(withBlockAdded(null, "wait")).toBeNull();
    expect(canAddBlock([])).toBe(false);
  });

  it("has a starter definition and examples the API accepts", () => {
    const starter = WorkflowDefinition.parse(starterDefinition());
    expect(checkWorkflowDefinition(starter)).toEqual([]);
    for (const type of KNOWN_BLOCK_TYPES) {
      const block = BLOCK_HELP[type].example;
      const parsed = WorkflowDefinition.safeParse({ blocks: [block] });
      expect(parsed.success, `${type}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it("describes every field each block type accepts", () => {
    for (const schema of Block.options) {
      const type = schema.shape.type.value;
      const helped = [...BLOCK_HELP[type].fields, ...COMMON_FIELDS].map((f) => f.name);
      expect(helped, type).toEqual(expect.arrayContaining(Object.keys(schema.shape)));
    }
  });

  it("tells where an llm block's key comes from and that it is paid work", () => {
    const { summary } = BLOCK_HELP.llm;
    expect(summary).toContain(LLM_API_KEY_SECRET);
    expect(summary).toContain(ANTHROPIC_API_KEY_SECRET);
    expect(summary).toContain("CELLFLOW_LLM_PRICES");
  });

  it("says how long ago in words", () => {
    const now = Date.parse("2025-06-01T12:00:00Z");
    expect(timeAgo("2025-06-01T11:59:30Z", now)).toBe("just now");
    expect(timeAgo("2025-06-01T11:55:00Z", now)).toBe("5 minutes ago");
    expect(timeAgo("2025-06-01T09:00:00Z", now)).toBe("3 hours ago");
    expect(timeAgo("2025-05-31T12:00:00Z", now)).toBe("yesterday");
    expect(timeAgo("not a date", now)).toBe("");
  });
});

describe("saving", () => {
  const issue = { path: "definition.blocks.0.next", message: "names unknown block" };

  it("lists each of the API's issues once, under its message", () => {
    const other = { path: "name", message: "too long" };
    expect(uniqueIssues([issue, other, { ...issue }])).toEqual([issue, other]);
    const refused = new ApiError(400, "invalid", "The definition is not valid", [issue, issue]);
    expect(saveRefusal(refused)).toEqual({
      issues: [issue],
      error: "The definition is not valid",
    });
  });

  it("shows only why it failed when no field was named", () => {
    const r = saveRefusal(new Error("offline"));
    expect(r.issues).toEqual([]);
    expect(r.error).toBeTruthy();
  });

  it("saves on Ctrl+S and ⌘+S, not with Alt", () => {
    const key = { metaKey: false, ctrlKey: false, altKey: false, key: "s" };
    expect(isSaveShortcut({ ...key, ctrlKey: true })).toBe(true);
    expect(isSaveShortcut({ ...key, metaKey: true, key: "S" })).toBe(true);
    expect(isSaveShortcut({ ...key, ctrlKey: true, altKey: true })).toBe(false);
    expect(isSaveShortcut(key)).toBe(false);
    expect(isSaveShortcut({ ...key, ctrlKey: true, key: "a" })).toBe(false);
  });
});
