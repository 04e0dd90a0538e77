/**
 * Expressions and `{{ }}` templates checked as people type, in the browser: parsed with
 * JSONata (never evaluated here: that is the engine's, src/execution/expressions.ts),
 * a syntax error given with its position, and the names an expression starts from held
 * to the ones in scope — `inputs`, `row`, `blocks`, `vars`, `secrets` — with the ids
 * after `blocks.` (and after `inputs.`, when the workflow declares inputs) held to the
 * workflow's. A wrong name is a warning, not an error: the expression still runs, it
 * just finds nothing. Only names read from the expression's root are checked; names
 * inside a filter, a lambda or after the first step of a path are relative to
 * something else.
 */
import jsonata from "jsonata";

export const ROOT_NAMES = ["inputs", "row", "blocks", "vars", "secrets"] as const;

export interface ExpressionScope {
  /** The workflow's declared inputs (none declared: `inputs.<name>` is not checked). */
  inputNames: readonly string[];
  /** The other blocks' ids. */
  blockIds: readonly string[];
}

export interface ExpressionProblem {
  severity: "error" | "warning";
  message: string;
  /** 0-based offset in the field's text. */
  position: number;
}

interface AstNode {
  type?: string;
  value?: unknown;
  position?: number;
  steps?: AstNode[];
  [key: string]: unknown;
}

/** Keys whose expressions read something other than the expression's root. */
const RELATIVE = new Set(["stages", "predicate", "group", "focus", "body"]);

const isNode = (v: unknown): v is AstNode =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const quote = (s: string) => `“${s}”`;

function listed(names: readonly string[]): string {
  return names.length === 0 ? "none" : names.join(", ");
}

/** A name step's start: JSONata places a token by where it ends. */
function startOf(node: AstNode, offset: number): number {
  const end = typeof node.position === "number" ? node.position : 0;
  return Math.max(0, offset + end - String(node.value ?? "").length);
}

function checkPath(
  steps: readonly AstNode[],
  scope: ExpressionScope,
  offset: number,
  out: ExpressionProblem[],
) {
  const [root, next] = steps;
  if (root?.type !== "name" || typeof root.value !== "string") return;
  const name = root.value;
  if (!(ROOT_NAMES as readonly string[]).includes(name)) {
    out.push({
      severity: "warning",
      message: `unknown name ${quote(name)}: expressions read ${ROOT_NAMES.join(", ")}`,
      position: startOf(root, offset),
    });
    return;
  }
  if (next?.type !== "name" || typeof next.value !== "string") return;
  if (name === "blocks" && !scope.blockIds.includes(next.value))
    out.push({
      severity: "warning",
      message: `no other block has the id ${quote(next.value)} (blocks: ${listed(scope.blockIds)})`,
      position: startOf(next, offset),
    });
  if (name === "inputs" && scope.inputNames.length > 0 && !scope.inputNames.includes(next.value))
    out.push({
      severity: "warning",
      message: `the workflow has no input ${quote(next.value)} (inputs: ${listed(scope.inputNames)})`,
      position: startOf(next, offset),
    });
}

function visit(
  node: unknown,
  scope: ExpressionScope,
  offset: number,
  out: ExpressionProblem[],
): void {
  if (Array.isArray(node)) {
    for (const n of node) visit(n, scope, offset, out);
    return;
  }
  if (!isNode(node)) return;
  if (node.type === "lambda") return;
  if (node.type === "path" && Array.isArray(node.steps)) {
    checkPath(node.steps, scope, offset, out);
    // A path may start with something computed (a call, a block): that reads the root.
    const first = node.steps[0];
    if (first && first.type !== "name") visit(first, scope, offset, out);
    return;
  }
  if (node.type === "name") {
    checkPath([node], scope, offset, out);
    return;
  }
  for (const [key, child] of Object.entries(node)) {
    if (!RELATIVE.has(key) && typeof child === "object") visit(child, scope, offset, out);
  }
}

function parseError(err: unknown): { message: string; position: number | null } {
  const e = isNode(err) ? err : {};
  const message = typeof e.message === "string" ? e.message : String(err);
  return { message, position: typeof e.position === "number" ? e.position : null };
}

/**
 * A JSONata expression's problems: its syntax error (at most one, with where it is), or
 * the names it reads that are not in scope. `offset` places it inside a larger text.
 */
export function checkExpression(
  text: string,
  scope: ExpressionScope,
  offset = 0,
): ExpressionProblem[] {
  if (text.trim() === "") return [];
  let ast: unknown;
  try {
    ast = jsonata(text).ast();
  } catch (err) {
    const { message, position } = parseError(err);
    // JSONata counts from 1 and points at the end of the token it stopped at.
    const at = position === null ? text.length : Math.min(Math.max(position - 1, 0), text.length);
    return [
      {
        severity: "error",
        message: `${message} (at character ${offset + at + 1})`,
        position: offset + at,
      },
    ];
  }
  const out: ExpressionProblem[] = [];
  visit(ast, scope, offset, out);
  return out;
}

/** The same pattern as src/domain/templates.ts, with where each expression sits. */
const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;

export interface TemplateExpression {
  /** As the engine evaluates it: trimmed. */
  expression: string;
  /** Offset of the expression's first character in the template. */
  start: number;
}

export function templateExpressionsAt(text: string): TemplateExpression[] {
  const found: TemplateExpression[] = [];
  for (const m of text.matchAll(TEMPLATE)) {
    const inner = m[1] ?? "";
    const lead = inner.length - inner.trimStart().length;
    found.push({ expression: inner.trim(), start: (m.index ?? 0) + 2 + lead });
  }
  return found;
}

/** A template's problems: each `{{ }}` checked as an expression, and a `{{` left open. */
export function checkTemplate(text: string, scope: ExpressionScope): ExpressionProblem[] {
  const out: ExpressionProblem[] = [];
  for (const t of templateExpressionsAt(text)) {
    if (t.expression === "")
      out.push({
        severity: "error",
        message: "empty {{ }}: put an expression inside",
        position: t.start,
      });
    else out.push(...checkExpression(t.expression, scope, t.start));
  }
  const lastClose = text.lastIndexOf("}}");
  const open = text.indexOf("{{", lastClose === -1 ? 0 : lastClose + 2);
  if (open !== -1)
    out.push({
      severity: "warning",
      message: "“{{” without a closing “}}”: it is sent as written",
      position: open,
    });
  return out;
}

export interface Completion {
  /** Replace `text.slice(from, to)` with an option. */
  from: number;
  to: number;
  options: string[];
}

const TOKEN = /([A-Za-z_]\w*)(?:\.(\w*))?$/;

/**
 * What the name being typed at `caret` may become: a root name, a block id after
 * `blocks.` or an input after `inputs.`. In a template, only inside an open `{{`.
 */
export function completeAt(
  text: string,
  caret: number,
  scope: ExpressionScope,
  template: boolean,
): Completion | null {
  const before = text.slice(0, caret);
  if (template && before.lastIndexOf("{{") <= before.lastIndexOf("}}")) return null;
  const m = TOKEN.exec(before);
  if (!m) return null;
  const from = caret - m[0].length;
  // Part of a longer path, a `$variable` or a number: not a root name.
  if (from > 0 && /[\w$.`]/.test(before[from - 1] ?? "")) return null;
  const to = caret + (/^\w*/.exec(text.slice(caret))?.[0].length ?? 0);
  const head = m[1] ?? "";
  const typed = text.slice(from, to);
  let options: string[];
  if (m[2] === undefined) options = ROOT_NAMES.filter((r) => r.startsWith(head));
  else {
    const ids = head === "blocks" ? scope.blockIds : head === "inputs" ? scope.inputNames : [];
    options = ids.filter((id) => id.startsWith(m[2] ?? "")).map((id) => `${head}.${id}`);
  }
  options = options.filter((o) => o !== typed);
  return options.length > 0 ? { from, to, options } : null;
}
