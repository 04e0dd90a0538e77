import { z } from "zod";
import { EntityId } from "./common";

/** `POST …/cells/:groupId/resume`: the paused attempt's execution id and the approval data. */
export const ResumeCellRequest = z.strictObject({
  executionId: EntityId,
  data: z.json().optional(),
});
export type ResumeCellRequest = z.infer<typeof ResumeCellRequest>;

export const ResumeCellResponse = z.object({
  status: z.literal("queued"),
  executionId: EntityId,
});
export type ResumeCellResponse = z.infer<typeof ResumeCellResponse>;
