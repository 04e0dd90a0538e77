/**
 * "Try it" in the workflow editor, without React: the inputs typed in the form read as
 * JSON when they parse (text otherwise), the body of `POST /api/workflows/:id/test` (the
 * unsaved draft when there is one, else the saved draft), which blocks of a definition may
 * cost credits (asked about before sending `allowPaid`), whether a refusal asks for
 * `allowPaid`, the answer as block runs for the graph, and a row's short label. Pure, so
 * it is unit-tested.
 */
import type { Schemas } from "@/client/cellflow-client";
import { ApiError } from "../api";

export type TestBody = Schemas["TestWorkflowRequest"];
export type TestAnswer = Schemas["TestWorkflowResponse"];
type Json = Schemas["JsonValue"];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The blocks of a definition (its JSON as typed), or none when it has no block list. */
export function blocksOf(definition: unknown): Record<string, unknown>[] {
  if (!isRecord(definition) || !Array.isArray(definition.blocks)) return [];
  return definition.blocks.filter(isRecord);
}

/**
 * The blocks that may be charged: enrichments and llm calls, named for the confirmation
 * (`look (enrichment company_lookup)`, `ask (llm gpt-4o-mini)`). Whether they really cost
 * is the server's to say (a free enrichment, an unpriced model); sub-workflows are not
 * read here: the server's refusal names their paid blocks.
 */
export function paidBlocks(definition: unknown): string[] {
  const out: string[] = [];
  for (const b of blocksOf(definition)) {
    const id = typeof b.id === "string" ? b.id : "?";
    if (b.type === "enrichment")
      out.push(`${id} (enrichment ${typeof b.enrichmentId === "string" ? b.enrichmentId : "?"})`);
    else if (b.type === "llm")
      out.push(`${id} (llm ${typeof b.model === "string" ? b.model : "?"})`);
  }
  return out;
}

/**
 * A typed value: JSON when it parses (`42`, `true`, `{"a":1}`, `"quoted"`), the text as
 * it is otherwise; blank → undefined (the input is left out, so a default or a missing
 * required input is the workflow's to judge).
 */
export function parseInputValue(text: string): Json | undefined {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** The form's values as the request's `inputs` (blank fields left out). */
export function inputsFrom(
  names: readonly string[],
  values: Readonly<Record<string, string>>,
): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const name of names) {
    const v = parseInputValue(values[name] ?? "");
    if (v !== undefined) out[name] = v;
  }
  return out;
}

export type TryTarget =
  | { mode: "inputs"; inputs: Record<string, Json> }
  | { mode: "row"; tableId: string; groupId: string; rowId: string };

/**
 * The test request: the unsaved `definition` when the draft has changes and parses, else
 * the saved draft (`version: "live"`: without it a group on "deployed" would run its
 * deployed version, not what the editor shows).
 */
export function buildTestBody(opts: {
  target: TryTarget;
  dirty: boolean;
  definition: unknown | null;
  allowPaid: boolean;
}): TestBody {
  const { target, dirty, definition, allowPaid } = opts;
  const body: TestBody =
    target.mode === "inputs"
      ? { inputs: target.inputs }
      : { tableId: target.tableId, groupId: target.groupId, rowId: target.rowId };
  // The draft is checked by the server like a saved one; the UI only passes it along.
  if (dirty && definition !== null)
    body.definition = definition as NonNullable<TestBody["definition"]>;
  else body.version = "live";
  if (allowPaid) body.allowPaid = true;
  return body;
}

/** Whether a refusal is the one asking for `allowPaid` (the workflow has paid blocks). */
export function asksAllowPaid(err: unknown): boolean {
  return (
    err instanceof ApiError && err.status === 400 && err.issues.some((i) => i.path === "allowPaid")
  );
}

/** What one block did: the panel's `BlockRun`, as the graph takes it. */
type BlockRunOf = Omit<TestAnswer["blocks"][number], "id">;

/** The answer's blocks by id, as the graph takes them. */
export function blockRunsOf(answer: Pick<TestAnswer, "blocks">): Record<string, BlockRunOf> {
  const out: Record<string, BlockRunOf> = {};
  for (const b of answer.blocks)
    out[b.id] = { status: b.status, output: b.output, error: b.error, durationMs: b.durationMs };
  return out;
}

/** A value as a short line: text as it is, the rest as JSON, cut at `max` characters. */
export function shortValue(value: unknown, max = 40): string {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  if (s === undefined) return "";
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * A row as an option's label: its position (1-based) and its first non-empty values in
 * column order, e.g. `#3 · Acme · acme.test`.
 */
export function rowLabel(
  row: { position: number; data: Readonly<Record<string, unknown>> },
  columns: readonly { id: string }[],
  values = 2,
): string {
  const shown: string[] = [];
  for (const c of columns) {
    if (shown.length >= values) break;
    const v = row.data[c.id];
    if (v === null || v === undefined || v === "") continue;
    shown.push(shortValue(v, 30));
  }
  return [`#${row.position + 1}`, ...shown].join(" · ");
}

/** The table's workflow groups that run this workflow. */
export function groupsOfWorkflow<G extends { kind: string; id: string; name: string }>(
  groups: readonly G[],
  workflowId: string,
): G[] {
  return groups.filter(
    (g) => g.kind === "workflow" && (g as { workflowId?: unknown }).workflowId === workflowId,
  );
}

/** Milliseconds for people: `840 ms`, `2.4 s`. */
export function formatDuration(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`;
}
