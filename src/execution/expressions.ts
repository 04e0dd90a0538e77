import jsonata from "jsonata";
import { parseTemplate } from "../domain/templates";

/** What every expression sees. */
export interface ExpressionScope {
  inputs: Record<string, unknown>;
  row: Record<string, unknown>;
  blocks: Record<string, unknown>;
  vars: Record<string, unknown>;
  /** The workspace's secrets by name (`secrets.NAME`); redacted from everything that leaves. */
  secrets: Record<string, string>;
}

const compiled = new Map<string, ReturnType<typeof jsonata>>();

function compile(expression: string): ReturnType<typeof jsonata> {
  let expr = compiled.get(expression);
  if (!expr) {
    expr = jsonata(expression);
    if (compiled.size > 5_000) compiled.clear();
    compiled.set(expression, expr);
  }
  return expr;
}

/** Evaluates a JSONata expression; `undefined` (no match) becomes null. */
export async function evaluate(expression: string, scope: ExpressionScope): Promise<unknown> {
  const result: unknown = await compile(expression).evaluate(scope);
  return normalize(result);
}

/** JSONata returns arrays tagged with internal flags; plain JSON values leave the engine. */
function normalize(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  if (typeof value === "function") return null;
  return value === null || typeof value !== "object" ? value : JSON.parse(JSON.stringify(value));
}

/** Renders `{{ expression }}` templates into a string. */
export async function renderTemplate(text: string, scope: ExpressionScope): Promise<string> {
  let out = "";
  for (const part of parseTemplate(text)) {
    out += part.literal;
    if (part.expression !== undefined) {
      const value = await evaluate(part.expression, scope);
      out += value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  return out;
}
