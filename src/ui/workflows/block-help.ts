/**
 * What people need to write a definition without reading code: each block type, its
 * fields and its output (after the HTTP contract, docs API.md "Workflows"), an example
 * block per type, the starter definition of a new workflow, and adding a block to a
 * definition with an id that is not taken yet.
 */
import type { BlockType, WorkflowDefinition } from "@/contracts/workflow";
import { DEFAULT_MAX_TOKENS } from "@/domain/llm-tokens";

export interface FieldHelp {
  name: string;
  required: boolean;
  about: string;
}

export interface BlockHelp {
  summary: string;
  fields: FieldHelp[];
  output: string;
  example: Record<string, unknown>;
}

const req = (name: string, about: string): FieldHelp => ({ name, required: true, about });
const opt = (name: string, about: string): FieldHelp => ({ name, required: false, about });

/** Every type is listed: the `Record` over `BlockType` makes a new type a compile error here. */
export const BLOCK_HELP: Record<BlockType, BlockHelp> = {
  transform: {
    summary: "Computes a value with a JSONata expression.",
    fields: [req("expression", "JSONata, e.g. inputs.n * 2")],
    output: "the expression's result",
    example: { id: "transform", type: "transform", expression: "$uppercase(inputs.name)" },
  },
  condition: {
    summary: "Chooses a branch: the expression's truth picks the true or false port.",
    fields: [
      req("expression", "JSONata, e.g. blocks.double > 10"),
      opt("next", '{ "true": "<block id>", "false": "<block id>" } (either may be left out)'),
    ],
    output: "true or false",
    example: {
      id: "condition",
      type: "condition",
      expression: "inputs.n > 10",
      next: {},
    },
  },
  http: {
    summary: "Calls a URL. Retries and timeouts apply; non-2xx after retries fails the block.",
    fields: [
      req("method", "GET, POST, PUT, PATCH, DELETE or HEAD"),
      req("url", "may hold {{ expression }} templates"),
      opt("headers", "{ name: value }, values may hold templates"),
      opt("body", "any JSON; a string may hold templates"),
      opt("timeoutMs", "default 30000"),
      opt("retry", "{ attempts, backoffMs }; Retry-After is honoured on 429/503"),
    ],
    output: "{ status, headers, body } (body parsed when JSON)",
    example: {
      id: "http",
      type: "http",
      method: "GET",
      url: "https://api.example.com/items/{{ inputs.id }}",
      retry: { attempts: 3, backoffMs: 1000 },
    },
  },
  foreach: {
    summary:
      "Runs another workflow once per item of a list; each run gets the inputs item, index and the item's fields.",
    fields: [
      req("items", "JSONata giving an array"),
      req("workflowId", "the workflow run for each item"),
      opt("concurrency", "default 5, at most 50"),
      opt("failurePolicy", '"fail-fast" (default) or "continue"'),
    ],
    output: "{ results: [{ status, output | error }], ok, failed }",
    example: {
      id: "foreach",
      type: "foreach",
      items: "inputs.list",
      workflowId: "<workflow id>",
      concurrency: 5,
    },
  },
  workflow: {
    summary: "Runs another workflow and waits for it. Nesting depth ≤ 8; a cycle fails.",
    fields: [req("workflowId", "the workflow to run"), opt("inputs", "{ name: expression }")],
    output:
      "the child's result: the output of its last block (by block id when several branches end)",
    example: {
      id: "workflow",
      type: "workflow",
      workflowId: "<workflow id>",
      inputs: { n: "inputs.n" },
    },
  },
  approval: {
    summary: "Pauses the cell until someone resumes it.",
    fields: [opt("prompt", "shown to the approver; may hold templates")],
    output: "the data given on resume",
    example: { id: "approval", type: "approval", prompt: "Send {{ row.email }}?" },
  },
  wait: {
    summary: "Waits before going on.",
    fields: [req("ms", "milliseconds, or an expression giving them")],
    output: "{ waitedMs }",
    example: { id: "wait", type: "wait", ms: 60000 },
  },
  fail: {
    summary: "Fails the cell with a message.",
    fields: [req("message", "may hold templates")],
    output: "— (the run ends in error)",
    example: { id: "fail", type: "fail", message: "No match for {{ inputs.name }}" },
  },
  enrichment: {
    summary: "Looks data up with an enrichment from the catalog (charged per hit).",
    fields: [
      req("enrichmentId", "see the Enrichments page, e.g. email_domain"),
      req("inputs", "{ enrichment input id: expression }"),
    ],
    output: "the enrichment's outputs, by output id",
    example: {
      id: "enrichment",
      type: "enrichment",
      enrichmentId: "email_domain",
      inputs: { email: "row.email" },
    },
  },
  llm: {
    summary:
      "Asks a language model once: an OpenAI-compatible chat completions endpoint, or Anthropic's messages API. " +
      "The API key is a workspace secret: LLM_API_KEY (openai) or ANTHROPIC_API_KEY (anthropic). " +
      "A model with a price (CELLFLOW_LLM_PRICES) is paid work: its estimate is reserved before the call and its real token usage charged after. " +
      "Each call waits its turn at the workspace's requests and tokens per minute for the model; at temperature 0 the same call reuses a cached answer at no cost.",
    fields: [
      opt("provider", '"openai" (default: any OpenAI-compatible endpoint) or "anthropic"'),
      req("model", "the model name, e.g. gpt-4o-mini"),
      req("prompt", "the user message; may hold templates"),
      opt("system", "instructions sent ahead of the prompt, as written (no templates)"),
      opt(
        "baseUrl",
        "the endpoint; default the server's CELLFLOW_LLM_BASE_URL or CELLFLOW_ANTHROPIC_BASE_URL, else the provider's own",
      ),
      opt("temperature", "0 to 2; at 0 a repeated call is answered from the cache"),
      opt(
        "maxTokens",
        `the answer's token cap (default ${DEFAULT_MAX_TOKENS}); the call reserves it plus ceil(characters / 4) of its messages at the tokens per minute`,
      ),
      opt(
        "jsonSchema",
        "a JSON Schema the answer must follow: an answer that does not match is asked again once with the errors, then fails the block",
      ),
    ],
    output:
      "{ text, model }; with a jsonSchema, the parsed answer. The cell's details show the model, tokens, cost and whether it was cached",
    example: {
      id: "llm",
      type: "llm",
      model: "gpt-4o-mini",
      system: "Answer in one short line.",
      prompt: "Summarise: {{ row.description }}",
      temperature: 0,
      maxTokens: 200,
    },
  },
};

/** Fields any block may carry. */
export const COMMON_FIELDS: FieldHelp[] = [
  req("id", "unique in the workflow, ^[a-z][a-z0-9_]{0,62}$"),
  req("type", "one of the types below"),
  opt("next", "the next block's id, or a list of ids to fan out; none ends the run"),
  opt("name", "a label for people"),
  opt("timeoutMs", "how long the block may take"),
  opt("retry", "{ attempts (1–10), backoffMs }"),
];

/** What expressions can read. */
export const EXPRESSION_CONTEXT: { name: string; about: string }[] = [
  { name: "inputs", about: "the workflow inputs, mapped from the row's columns" },
  { name: "row", about: "all the row's columns, by id" },
  { name: "blocks", about: "blocks.<id> is that block's output" },
  { name: "vars", about: "workflow variables (reserved)" },
  { name: "secrets", about: "the workspace's secrets: secrets.NAME, redacted from outputs" },
];

/** The definition of a new workflow: one input, one transform block. */
export function starterDefinition(): WorkflowDefinition {
  return {
    inputs: [{ name: "name", type: "text", required: true }],
    blocks: [
      {
        id: "greet",
        type: "transform",
        expression: "'Hello, ' & inputs.name",
      },
    ],
  };
}

/** An id based on `base` that no block in `taken` has: `http`, then `http_2`, `http_3`… */
export function freeBlockId(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const id = `${base}_${n}`;
    if (!taken.has(id)) return id;
  }
}

/** Whether the definition has a `blocks` list a block can be added to. */
export function canAddBlock(definition: unknown): boolean {
  return (
    definition !== null &&
    typeof definition === "object" &&
    !Array.isArray(definition) &&
    Array.isArray((definition as { blocks?: unknown }).blocks)
  );
}

/**
 * The definition with an example block of `type` appended, or null when the definition
 * has no `blocks` list to append to. The new block is not linked: the caller says so.
 */
export function withBlockAdded(
  definition: unknown,
  type: BlockType,
): { definition: Record<string, unknown>; id: string } | null {
  if (!canAddBlock(definition)) return null;
  const def = definition as Record<string, unknown>;
  if (!Array.isArray(def.blocks)) return null;
  const taken = new Set<string>();
  for (const b of def.blocks) {
    if (b !== null && typeof b === "object" && typeof (b as { id?: unknown }).id === "string")
      taken.add((b as { id: string }).id);
  }
  const example = BLOCK_HELP[type].example;
  const id = freeBlockId(type, taken);
  return { definition: { ...def, blocks: [...def.blocks, { ...example, id }] }, id };
}
