import { z } from "zod";
import { ClientId, EntityId, Expression, JsonValue, Name } from "./common";

const Next = z.union([ClientId, z.array(ClientId).min(1).max(50)]);

const Retry = z.strictObject({
  attempts: z.number().int().min(1).max(10),
  backoffMs: z.number().int().min(0).max(60_000),
});

/** Fields every block may carry. */
const base = {
  id: ClientId,
  name: z.string().max(200).optional(),
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  retry: Retry.optional(),
};

const Template = z.string().max(100_000);

export const TransformBlock = z.strictObject({
  ...base,
  type: z.literal("transform"),
  expression: Expression,
  next: Next.optional(),
});
export type TransformBlock = z.infer<typeof TransformBlock>;

export const ConditionBlock = z.strictObject({
  ...base,
  type: z.literal("condition"),
  expression: Expression,
  next: z.strictObject({ true: ClientId.optional(), false: ClientId.optional() }).optional(),
});
export type ConditionBlock = z.infer<typeof ConditionBlock>;

export const HttpBlock = z.strictObject({
  ...base,
  type: z.literal("http"),
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]),
  url: Template.min(1),
  headers: z.record(z.string().min(1).max(200), Template).optional(),
  body: JsonValue.optional(),
  next: Next.optional(),
});
export type HttpBlock = z.infer<typeof HttpBlock>;

export const ForeachBlock = z.strictObject({
  ...base,
  type: z.literal("foreach"),
  items: Expression,
  workflowId: EntityId,
  concurrency: z.number().int().min(1).max(50).optional(),
  failurePolicy: z.enum(["fail-fast", "continue"]).optional(),
  next: Next.optional(),
});
export type ForeachBlock = z.infer<typeof ForeachBlock>;

export const WorkflowBlock = z.strictObject({
  ...base,
  type: z.literal("workflow"),
  workflowId: EntityId,
  inputs: z.record(ClientId, Expression).optional(),
  next: Next.optional(),
});
export type WorkflowBlock = z.infer<typeof WorkflowBlock>;

export const ApprovalBlock = z.strictObject({
  ...base,
  type: z.literal("approval"),
  prompt: Template.optional(),
  next: Next.optional(),
});
export type ApprovalBlock = z.infer<typeof ApprovalBlock>;

export const WaitBlock = z.strictObject({
  ...base,
  type: z.literal("wait"),
  /** Milliseconds, or an expression giving them (e.g. `inputs.delayMs`). */
  ms: z.union([
    z
      .number()
      .int()
      .min(0)
      .max(30 * 24 * 3_600_000),
    Expression,
  ]),
  next: Next.optional(),
});
export type WaitBlock = z.infer<typeof WaitBlock>;

export const FailBlock = z.strictObject({
  ...base,
  type: z.literal("fail"),
  message: Template.min(1),
  next: Next.optional(),
});
export type FailBlock = z.infer<typeof FailBlock>;

export const EnrichmentBlock = z.strictObject({
  ...base,
  type: z.literal("enrichment"),
  enrichmentId: ClientId,
  inputs: z.record(ClientId, Expression),
  next: Next.optional(),
});
export type EnrichmentBlock = z.infer<typeof EnrichmentBlock>;

export const LlmBlock = z.strictObject({
  ...base,
  type: z.literal("llm"),
  /** The API dialect: OpenAI-compatible chat completions (default) or Anthropic's messages. */
  provider: z.enum(["openai", "anthropic"]).optional(),
  baseUrl: z.url().max(2_000).optional(),
  model: z.string().min(1).max(200),
  /** Instructions sent ahead of the prompt (a system message), as written. */
  system: z.string().min(1).max(100_000).optional(),
  prompt: Template.min(1),
  jsonSchema: z.record(z.string(), JsonValue).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** The answer's token cap; unset, DEFAULT_MAX_TOKENS is sent. */
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  next: Next.optional(),
});
export type LlmBlock = z.infer<typeof LlmBlock>;

export const BLOCK_TYPES = [
  "transform",
  "condition",
  "http",
  "foreach",
  "workflow",
  "approval",
  "wait",
  "fail",
  "enrichment",
  "llm",
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

export const Block = z.discriminatedUnion("type", [
  TransformBlock,
  ConditionBlock,
  HttpBlock,
  ForeachBlock,
  WorkflowBlock,
  ApprovalBlock,
  WaitBlock,
  FailBlock,
  EnrichmentBlock,
  LlmBlock,
]);
export type Block = z.infer<typeof Block>;

export const INPUT_TYPES = ["text", "number", "boolean", "date", "json"] as const;

export const WorkflowInput = z.strictObject({
  name: ClientId,
  type: z.enum(INPUT_TYPES).default("json"),
  required: z.boolean().default(false),
});
export type WorkflowInput = z.infer<typeof WorkflowInput>;

export const WorkflowDefinition = z.strictObject({
  inputs: z.array(WorkflowInput).max(100).default([]),
  blocks: z.array(Block).min(1, "a workflow needs at least one block").max(200),
});
export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;

export const CreateWorkflowRequest = z.strictObject({
  name: Name,
  definition: WorkflowDefinition,
});
export type CreateWorkflowRequest = z.infer<typeof CreateWorkflowRequest>;

export const UpdateWorkflowRequest = z.strictObject({
  name: Name.optional(),
  definition: WorkflowDefinition.optional(),
});
export type UpdateWorkflowRequest = z.infer<typeof UpdateWorkflowRequest>;

export const WorkflowView = z.object({
  id: z.string(),
  name: z.string(),
  definition: WorkflowDefinition,
  deployedVersion: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WorkflowView = z.infer<typeof WorkflowView>;

/** The key's workspace's workflows, oldest first. */
export const WorkflowList = z.object({ workflows: z.array(WorkflowView) });
export type WorkflowList = z.infer<typeof WorkflowList>;

/** A deployed version's number (from 1). */
const VersionNumber = z.number().int().min(1).max(2_147_483_647);

/**
 * `POST /api/workflows/:id/deploy`: no body (or `{}`) freezes the draft; `version` deploys
 * a copy of that earlier version as the next one (a rollback; the draft is left as is).
 */
export const DeployWorkflowRequest = z.strictObject({ version: VersionNumber.optional() });
export type DeployWorkflowRequest = z.infer<typeof DeployWorkflowRequest>;

/** The version a deploy froze; `rolledBackFrom`: the version it copies (a rollback), else null. */
export const DeployedWorkflow = z.object({
  version: z.number().int(),
  rolledBackFrom: z.number().int().nullable(),
});
export type DeployedWorkflow = z.infer<typeof DeployedWorkflow>;

/** One deployed version, as the history lists it. */
export const WorkflowVersionSummary = z.object({
  version: z.number().int(),
  deployedAt: z.string(),
  rolledBackFrom: z.number().int().nullable(),
});
export type WorkflowVersionSummary = z.infer<typeof WorkflowVersionSummary>;

/** A workflow's deployed versions, newest first (empty before the first deploy). */
export const WorkflowVersionList = z.object({ versions: z.array(WorkflowVersionSummary) });
export type WorkflowVersionList = z.infer<typeof WorkflowVersionList>;

/** One deployed version with the definition it froze. */
export const WorkflowVersionView = WorkflowVersionSummary.extend({
  definition: WorkflowDefinition,
});
export type WorkflowVersionView = z.infer<typeof WorkflowVersionView>;

/**
 * A finished block as an execution records it (executions.checkpoints): its output and
 * the edges it took. A later attempt of the same execution resumes after it.
 */
export interface Checkpoint {
  output: unknown;
  taken: string[];
  /**
   * A fan-out that finished with failed items (`failurePolicy: "continue"`): a later attempt
   * of this execution reuses it, a resumed execution runs it again (only the failed items).
   */
  retryOnResume?: true;
}
