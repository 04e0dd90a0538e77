/** `POST /api/workflows/:id/test`: one run of a workflow, now, that writes no cell. */
import { z } from "zod";
import { ClientId, EntityId, JsonValue } from "./common";
import { WorkflowDefinition } from "./workflow";

export const TestWorkflowRequest = z.strictObject({
  /** The workflow's inputs; with a row and a group, they override the mapped ones. */
  inputs: z.record(ClientId, JsonValue).optional(),
  tableId: EntityId.optional(),
  rowId: EntityId.optional(),
  /** A workflow group of this workflow in that table: its input mapping and its outputs. */
  groupId: ClientId.optional(),
  /** An unsaved definition to run instead of a saved one. */
  definition: WorkflowDefinition.optional(),
  /** Which saved definition: the draft, or a deployed version. */
  version: z.union([z.literal("live"), z.number().int().min(1).max(1_000_000)]).optional(),
  /** Required when the definition (or a sub-workflow) has paid blocks; they are charged. */
  allowPaid: z.boolean().optional(),
});
export type TestWorkflowRequest = z.infer<typeof TestWorkflowRequest>;

export const TEST_RUN_STATUSES = ["completed", "error", "paused"] as const;
/** `cancelled`: it was still running when the test ended (a failure elsewhere, the time cap). */
export const TEST_BLOCK_STATUSES = ["completed", "error", "paused", "cancelled"] as const;

export const TestBlockReport = z.object({
  id: z.string(),
  status: z.enum(TEST_BLOCK_STATUSES),
  output: JsonValue,
  error: z.string().nullable(),
  durationMs: z.number().int(),
});
export type TestBlockReport = z.infer<typeof TestBlockReport>;

export const TestWorkflowResponse = z.object({
  status: z.enum(TEST_RUN_STATUSES),
  /**
   * With a group: its outputs by column id (as the cell's `outputs`); else what the
   * workflow returns to a parent (its last block's output, or by block id when several
   * branches ended). Only what finished when the run did not complete.
   */
  outputs: JsonValue,
  /** Every block that started, in start order. */
  blocks: z.array(TestBlockReport),
  /** Why the run did not complete (null when it did, or paused). */
  error: z.string().nullable(),
  /** What the test was charged, in credits. */
  costCredits: z.number(),
});
export type TestWorkflowResponse = z.infer<typeof TestWorkflowResponse>;
