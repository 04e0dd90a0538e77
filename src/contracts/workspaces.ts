import { z } from "zod";
import { PLANS } from "@/domain/statuses";
import { Name } from "./common";

/** `POST /api/admin/workspaces` (with the admin token). */
export const CreateWorkspaceRequest = z.strictObject({ name: Name });
export type CreateWorkspaceRequest = z.infer<typeof CreateWorkspaceRequest>;

/** A new workspace and its first API key; the only time the key is shown. */
export const CreatedWorkspace = z.object({
  id: z.string(),
  name: z.string(),
  apiKey: z.string(),
});
export type CreatedWorkspace = z.infer<typeof CreatedWorkspace>;

/**
 * `GET /api/usage`: this UTC month's credits. `used` is what was charged (answers that
 * were recorded); `reserved` is set aside for paid calls in flight, charged when their
 * answers are recorded and given back otherwise; `remaining` leaves both out of the cap.
 * `limit` and `remaining` are null when the plan has no monthly cap.
 */
export const UsageView = z.object({
  plan: z.enum(PLANS),
  month: z.string().regex(/^\d{4}-\d{2}$/),
  used: z.number(),
  reserved: z.number(),
  limit: z.number().nullable(),
  remaining: z.number().nullable(),
  bySource: z.array(z.object({ source: z.string(), credits: z.number() })),
});
export type UsageView = z.infer<typeof UsageView>;
