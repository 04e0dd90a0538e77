import { z } from "zod";

export const EnrichmentFieldType = z.enum(["text", "number", "boolean", "json"]);
export type EnrichmentFieldType = z.infer<typeof EnrichmentFieldType>;

export const EnrichmentInputView = z.object({
  id: z.string(),
  type: EnrichmentFieldType,
  required: z.boolean(),
  description: z.string(),
});
export type EnrichmentInputView = z.infer<typeof EnrichmentInputView>;

export const EnrichmentOutputView = z.object({
  id: z.string(),
  type: EnrichmentFieldType,
  description: z.string(),
});
export type EnrichmentOutputView = z.infer<typeof EnrichmentOutputView>;

export const EnrichmentView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** Credits per successful lookup; nothing is charged for `skipped` or `not_found`. */
  cost: z.number(),
  inputs: z.array(EnrichmentInputView),
  outputs: z.array(EnrichmentOutputView),
});
export type EnrichmentView = z.infer<typeof EnrichmentView>;

export const EnrichmentList = z.object({ enrichments: z.array(EnrichmentView) });
export type EnrichmentList = z.infer<typeof EnrichmentList>;
