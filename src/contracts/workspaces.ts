import { z } from "zod";
import { PLANS } from "@/domain/statuses";
import { Name } from "./common";

/** A workspace's plan: its month's credits, provider rate, run window and deadlines. */
export const Plan = z.enum(PLANS);
export type Plan = z.infer<typeof Plan>;

/**
 * `POST /api/admin/workspaces` (with the admin token). Without `plan` the workspace is on
 * `free`, as before plans could be chosen here.
 */
export const CreateWorkspaceRequest = z.strictObject({ name: Name, plan: Plan.optional() });
export type CreateWorkspaceRequest = z.infer<typeof CreateWorkspaceRequest>;

/** A new workspace and its first API key; the only time the key is shown. */
export const CreatedWorkspace = z.object({
  id: z.string(),
  name: z.string(),
  apiKey: z.string(),
  plan: Plan,
});
export type CreatedWorkspace = z.infer<typeof CreatedWorkspace>;

/** `PATCH /api/admin/workspaces/:id` (with the admin token): moves it to another plan. */
export const UpdateWorkspaceRequest = z.strictObject({ plan: Plan });
export type UpdateWorkspaceRequest = z.infer<typeof UpdateWorkspaceRequest>;

/** A workspace as the admin sees it after a change (never its keys). */
export const WorkspaceView = z.object({ id: z.string(), name: z.string(), plan: Plan });
export type WorkspaceView = z.infer<typeof WorkspaceView>;

/**
 * `GET /api/usage`: this UTC month's credits. `used` is what was charged (answers that
 * were recorded); `reserved` is set aside for paid calls in flight, charged when their
 * answers are recorded and given back otherwise; `remaining` leaves both out of the cap.
 * `limit` and `remaining` are null when the plan has no monthly cap. `bySource`: an llm
 * block's charges by model (`llm:<model>`), enrichments' by their charge key's source.
 * `limits.rowsPerTable`: the rows one table may hold under the plan (null: no cap).
 */
export const UsageView = z.object({
  plan: Plan,
  month: z.string().regex(/^\d{4}-\d{2}$/),
  used: z.number(),
  reserved: z.number(),
  limit: z.number().nullable(),
  remaining: z.number().nullable(),
  bySource: z.array(z.object({ source: z.string(), credits: z.number() })),
  limits: z.object({ rowsPerTable: z.number().int().nullable() }),
});
export type UsageView = z.infer<typeof UsageView>;
